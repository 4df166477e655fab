package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/tandem-bench/tandem/driver"
)

// consumeCmd is tandem's raw consumer loop as a process of its own: what a
// study's `consumer: {raw: true}` target runs, so it is measured like any
// consumer command it is compared with.
func consumeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "consume",
		Short: "tandem's raw AMQP consumer loop, on the queue the environment names (what consumer: {raw: true} runs)",
		Long: `consume drains the queue that TANDEM_AMQP_URL and TANDEM_QUEUE name with the raw
client: one connection, one channel, basic.qos TANDEM_PREFETCH, an ack per
message (TANDEM_ACK=multiple: one per half window; auto: none), until SIGTERM.
A study's consumer targets with raw: true run it; docs/study-format.md says more.`,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return driver.Consume(cmd.Context(), os.Getenv)
		},
	}
}
