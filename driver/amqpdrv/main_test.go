package amqpdrv

import (
	"os"
	"testing"

	"github.com/tandem-bench/tandem/internal/rabbittest"
)

// broker is the RabbitMQ node the tests share, except those that stop
// their own.
var broker rabbittest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	broker.Stop()
	os.Exit(code)
}
