package study

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/values"
)

// Study is a parsed study file. Field tags name the YAML keys; ",required"
// marks the keys that must be present. The JSON Schema for editors is
// generated from these types (see Schema).
type Study struct {
	Version     int            `yaml:"version,required" doc:"Format version; must be 1."`
	Name        string         `yaml:"name,required" doc:"The study's name, shown in reports."`
	Description string         `yaml:"description" doc:"What the study asks, in a sentence or two."`
	Seed        uint64         `yaml:"seed" doc:"Seed for every random choice (round order, generated cases); default 1."`
	Baseline    string         `yaml:"baseline" doc:"The target others are compared against; default the first target."`
	AA          []string       `yaml:"aa" doc:"Two targets that run the same build: how far apart they land raises the noise floor of every other comparison (an A/A test)."`
	Defaults    Defaults       `yaml:"defaults" doc:"Defaults for every scenario."`
	Generator   Generator      `yaml:"generator" doc:"The load generator's own settings."`
	Services    []Service      `yaml:"services" doc:"Shared infrastructure (a broker, a node) started once before the targets and stopped after them; targets name its endpoints as ${services.NAME.ENDPOINT}."`
	Targets     []Target       `yaml:"targets,required" doc:"The builds under test, in order; the first is the baseline unless baseline: says otherwise."`
	Calls       Calls          `yaml:"calls,required" doc:"Request shapes by name."`
	Startup     *Startup       `yaml:"startup" doc:"The startup study: start every target from empty this many times."`
	Scenarios   []Scenario     `yaml:"scenarios" doc:"The experiments, run in order."`
	Compat      *Compat        `yaml:"compat" doc:"Differential tests: the same cases sent to every target."`
	Metrics     *MetricsConfig `yaml:"metrics" doc:"What to scrape from each target's metrics endpoint during the run."`
	Costs       []CostSpec     `yaml:"costs" doc:"Counted costs: commands run under valgrind at 1, N, 2N and 4N operations (instructions and allocations per operation)."`

	// File is the path the study was read from.
	File string `yaml:"-"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `yaml:"-"`
	// pos locates every value read from the file by its path (MissingEnv).
	pos map[string]Pos
}

// Calls maps call names to calls.
type Calls map[string]*Call

// Defaults are the settings a scenario inherits.
type Defaults struct {
	Rounds      int           `yaml:"rounds" doc:"Measured rounds per target, a fixed design; leave it out for adaptive rounds (rule shift): rounds go on until every comparison is decided or the budget (max_rounds, max_time) is spent. With rule spread the default is 3."`
	Warmup      time.Duration `yaml:"warmup" doc:"Length of the discarded warm-up run per target and scenario; default 1s."`
	MinDuration time.Duration `yaml:"min_duration" doc:"Calibration makes each measured run last at least this; default 250ms (rule spread: 5s): many short rounds, each pair close in time, tell more than a few long ones."`
	Timeout     time.Duration `yaml:"timeout" doc:"Per-request timeout; default 10s."`
	Order       string        `yaml:"order" doc:"Order of the targets within a round: alternate (A B, B A, …; default) or shuffle (seeded by seed)."`
	NoiseFloor  float64       `yaml:"noise_floor" doc:"The noise floor δ in percent: a shift smaller than it is no speed verdict, and a pair whose interval lies within ±δ is indistinguishable (rule spread: relative differences of bests at or below it are indistinguishable); default 2."`
	// The speed rule and its budget (docs/methods.md, Verdicts).
	Rule      string        `yaml:"rule" doc:"The speed rule: shift (default: the shift of paired rounds with a distribution-free interval, adaptive rounds, the false-alarm rate held at alpha over the study) or spread (the bests against the run-to-run spread, as the layered broker study's table)."`
	Alpha     float64       `yaml:"alpha" doc:"The false-alarm rate of the study's verdicts taken together (rule shift), a probability above 0 and below 0.5; default 0.05."`
	MaxRounds int           `yaml:"max_rounds" doc:"Adaptive rounds: the most rounds per target at a scenario's level; default 100."`
	MaxTime   time.Duration `yaml:"max_time" doc:"Adaptive rounds: the most time a scenario's level may take, its rounds and warm-up; default 2m."`
	// The verdict's health gate (docs/methods.md, Verdicts).
	MaxErrorShareDiff float64 `yaml:"max_error_share_diff" doc:"Percentage points by which a candidate's share of failed requests may exceed the baseline's before it is failing (any errors where the baseline has none are failing too); default 1."`
	MaxShortfall      float64 `yaml:"max_rate_shortfall" doc:"Percent by which an open or batched loop's achieved rate may fall short of the offered rate before the verdict is withheld (any dropped arrival withholds it too); default 1."`
	ClientBound       float64 `yaml:"client_bound" doc:"Percent of the load engine's capacity the generator may use in a round before the verdict is withheld as client-bound; default 90."`
}

// Generator configures the load generator.
type Generator struct {
	CPUs string `yaml:"cpus" doc:"CPU list for the generator when tandem pins (the default), e.g. \"0\", \"0-1\" or \"0,2-3\"; the targets and services without cpus of their own get the other CPUs. Default: the first half of the CPUs tandem may run on."`
}

// Target is one build under test.
type Target struct {
	Name          string            `yaml:"name,required" doc:"Unique name of the target."`
	Start         *Start            `yaml:"start" doc:"How to start the target from empty; absent for a target that is already running."`
	Endpoints     map[string]string `yaml:"endpoints,required" doc:"Addresses by name: host:port for gRPC, URLs for HTTP, JSON-RPC and WebSocket."`
	Ready         Ready             `yaml:"ready" doc:"When the target counts as started."`
	Metrics       string            `yaml:"metrics" doc:"Prometheus exposition URL of the target, scraped every second during the run."`
	MetricsLabels map[string]string `yaml:"metrics_labels" doc:"With metrics.prometheus: the labels that select this target's series on the Prometheus server, e.g. {job: node-a}."`
	DataDir       string            `yaml:"data_dir" doc:"The target's data directory, measured for disk use."`
	Consumer      *Consumer         `yaml:"consumer" doc:"The target is a message consumer: for every run tandem fills a fresh queue on the broker at the target's amqp endpoint, starts the consumer and times the drain from the first delivery to the last ack by watching the queue."`
	Group         *Group            `yaml:"group" doc:"The target is a group of processes made from its start template, one per node: a testnet of validators and full nodes as one target."`
	Network       *Network          `yaml:"network" doc:"Conditions on the generator's path to each of the target's endpoints (delay, jitter, loss, bandwidth, resets), through a link in tandem's process: the load and compat cases go through it, readiness checks and metrics do not (docs/network.md)."`
}

// Group makes a target of several nodes, each a process started from the
// target's start, endpoints and metrics with its own ${node.*} and
// ${port.*}; ${group.port.NAME} is one port for the whole group.
type Group struct {
	Nodes  []GroupNodes `yaml:"nodes,required" doc:"The nodes by role, in order: ${node.index} counts across them from 0; ${node.name} is the role and its index within it (validator0, full1); ${node.host} is a loopback address of the node's own (127.0.0.1 for index 0, 127.0.0.2 for 1, …)."`
	Setup  [][]string   `yaml:"setup" doc:"Commands run to completion, in order, at each start of the group from empty, after its ${workdir} is emptied and before its nodes start (e.g. cometbft testnet); argv lists, with ${workdir}, ${group.port.NAME}, ${tandem}, ${studydir}, ${env.NAME}."`
	Calls  string       `yaml:"calls" doc:"Where the load goes: first (default: the first node) or round-robin (each connection to the next node)."`
	Height *Probe       `yaml:"height" doc:"A call and the field of its answer that is a node's height (its chain's length): after a perturbation, a node has caught up when its height reaches the group's highest."`
	// Network, Regions and Latency are the links between the nodes
	// (docs/network.md, Links between a group's nodes).
	Network *Network                 `yaml:"network" doc:"Conditions on the links between the group's nodes, each way, as a target's network: has them: every node reaches each other node's ports named by ${group.nodes.P}, ${group.others.P} and ${group.peers.P} in its start through a link of its own."`
	Regions map[string][]string      `yaml:"regions" doc:"The nodes by region, by ${node.name} ({eu: [validator0, validator1], us: [validator2, full0]}): latency sets the delay between the nodes of two regions."`
	Latency map[string]time.Duration `yaml:"latency" doc:"One-way delay each way between the nodes of two regions, by REGION-REGION ({eu-us: 50ms}; eu-eu between eu's own nodes): on those links it replaces network's delay."`
}

// GroupNodes are the nodes of one role in a group.
type GroupNodes struct {
	Role  string `yaml:"role,required" doc:"The role's name (validator, full, …): perturbations can rotate over a role."`
	Count int    `yaml:"count,required" doc:"How many nodes have this role."`
}

// Probe names a field of a call's answer.
type Probe struct {
	Call string `yaml:"call,required" doc:"The call."`
	Path string `yaml:"path,required" doc:"The field, as a path into the answer (result.sync_info.latest_block_height)."`
}

// Size is the group's node count (MaxGroupNodes + 1 for any count beyond
// MaxGroupNodes, so that a huge count cannot overflow).
func (g *Group) Size() int {
	n := 0
	for _, r := range g.Nodes {
		n += min(max(r.Count, 0), MaxGroupNodes+1)
	}
	return min(n, MaxGroupNodes+1)
}

// Has reports whether the group has a node of that name (a role and an
// index within it), without listing the nodes.
func (g *Group) Has(name string) bool {
	for _, r := range g.Nodes {
		rest, ok := strings.CutPrefix(name, r.Role)
		if !ok || rest == "" || rest != strconv.Itoa(0) && strings.HasPrefix(rest, "0") {
			continue
		}
		if i, err := strconv.Atoi(rest); err == nil && i >= 0 && i < r.Count {
			return true
		}
	}
	return false
}

// Member is one node of a group: its index across the group, its role,
// and its name (the role and its index within the role).
type Member struct {
	Index      int
	Role, Name string
}

// Members lists the group's nodes in order.
func (g *Group) Members() []Member {
	var out []Member
	for _, r := range g.Nodes {
		for i := range r.Count {
			out = append(out, Member{Index: len(out), Role: r.Role, Name: fmt.Sprintf("%s%d", r.Role, i)})
		}
	}
	return out
}

// MaxGroupNodes bounds a group's size (each node a loopback address of its
// own, 127.0.0.1 to 127.0.0.64).
const MaxGroupNodes = 64

// Consumer is a target that consumes from a queue tandem fills: tandem's
// own raw loop, or a command in any language.
type Consumer struct {
	Raw     bool              `yaml:"raw" doc:"tandem's own loop: the raw AMQP client, one channel, the call's prefetch and ack mode (the baseline a layered study holds the others against)."`
	Command []string          `yaml:"command" doc:"A consumer program (argv, no shell) started for every run once the queue is full and stopped after it; its environment names TANDEM_AMQP_URL, TANDEM_QUEUE, TANDEM_QUEUE_TYPE, TANDEM_PREFETCH (which it must use), TANDEM_ACK and TANDEM_MESSAGES."`
	Build   [][]string        `yaml:"build" doc:"Commands run to completion, in order, once before the first run (e.g. go build); argv, no shell."`
	Dir     string            `yaml:"dir" doc:"Working directory of build and command."`
	Env     map[string]string `yaml:"env" doc:"Extra environment variables."`
}

// Service is shared infrastructure, started once before the targets.
type Service struct {
	Name      string            `yaml:"name,required" doc:"Unique name of the service."`
	RabbitMQ  *RabbitMQService  `yaml:"rabbitmq" doc:"A private RabbitMQ node (Debian package rabbitmq-server): its own node name, ports and data dir, on 127.0.0.1 only; endpoint amqp."`
	Start     *Start            `yaml:"start" doc:"Any other service: how to start it (as for a target)."`
	Endpoints map[string]string `yaml:"endpoints" doc:"Addresses by name (with start); a rabbitmq service has amqp."`
	Ready     ServiceReady      `yaml:"ready" doc:"When a started service counts as up; default: when one of its endpoints accepts a connection."`
}

// RabbitMQService is a private RabbitMQ node, or a broker already running.
type RabbitMQService struct {
	URLEnv string `yaml:"url_env" doc:"An environment variable: when it is set and not empty, its amqp:// URL names a broker already running and no node is started."`
}

// ServiceReady is a started service's readiness.
type ServiceReady struct {
	Log     string        `yaml:"log" doc:"A regular expression: the service is up once a line of its output matches it."`
	Timeout time.Duration `yaml:"timeout" doc:"How long to wait; default 120s."`
}

// Start says how to start a target.
type Start struct {
	Command []string          `yaml:"command,required" doc:"The program and its arguments (argv; no shell)."`
	Init    [][]string        `yaml:"init" doc:"Commands run to completion, in order, after the wipe and before command (e.g. a node's init); argv, no shell."`
	Dir     string            `yaml:"dir" doc:"Working directory."`
	Env     map[string]string `yaml:"env" doc:"Extra environment variables."`
	Wipe    []string          `yaml:"wipe" doc:"Paths under ${workdir} removed before every start, so the target starts from empty; a path that leads out of ${workdir} (by .. or a symlink) is refused."`
	// WipeOutside opts in, path by path, to deleting outside the workdir.
	WipeOutside []string `yaml:"wipe_outside" doc:"Absolute paths outside ${workdir} removed before every start, each named here on purpose (tandem deletes nothing else outside its output directory)."`
	CPUs        string   `yaml:"cpus" doc:"CPU list to pin the target to, e.g. \"1\" or \"2-3\"."`
}

// Ready is a target's readiness: the first answer, then a condition.
type Ready struct {
	FirstAnswer *CallRef      `yaml:"first_answer" doc:"The call whose first successful answer marks the first answer."`
	Condition   *Condition    `yaml:"condition" doc:"A condition on a call's answer that marks the target ready."`
	Log         string        `yaml:"log" doc:"A regular expression: the target is ready once a line of its output matches it."`
	Timeout     time.Duration `yaml:"timeout" doc:"How long to wait for readiness; default 120s."`
}

// CallRef names a call.
type CallRef struct {
	Call string `yaml:"call,required" doc:"Name of a call."`
}

// Condition holds when a field of a call's answer meets one predicate:
// equals a value, compares with a number, or matches a regular expression.
type Condition struct {
	Call   string `yaml:"call,required" doc:"Name of a call."`
	Path   string `yaml:"path,required" doc:"Field path in the answer (JSON form), as in compat: keys joined by dots, [N] for a list element, e.g. indexed, result.height or result.txs[0].height (result.txs.0.height also works)."`
	Equals Value  `yaml:"equals" doc:"The value the field must equal. Give exactly one predicate: equals, >=, >, <=, < or matches."`
	// AtLeast, Above, AtMost and Below compare the field, read as a
	// number (a numeric string too: protojson writes 64-bit integers so).
	AtLeast *float64 `yaml:">=" doc:"The field, as a number, must be at least this, e.g. {path: result.sync_info.latest_block_height, \">=\": 1}."`
	Above   *float64 `yaml:">" doc:"The field, as a number, must be above this."`
	AtMost  *float64 `yaml:"<=" doc:"The field, as a number, must be at most this."`
	Below   *float64 `yaml:"<" doc:"The field, as a number, must be below this."`
	Matches string   `yaml:"matches" doc:"A regular expression (Go syntax) the field's text must match (a string as is, anything else as JSON)."`
}

// Predicate is the condition's predicate in words, e.g. ">= 1".
func (c *Condition) Predicate() string {
	switch {
	case c.AtLeast != nil:
		return fmt.Sprintf(">= %g", *c.AtLeast)
	case c.Above != nil:
		return fmt.Sprintf("> %g", *c.Above)
	case c.AtMost != nil:
		return fmt.Sprintf("<= %g", *c.AtMost)
	case c.Below != nil:
		return fmt.Sprintf("< %g", *c.Below)
	case c.Matches != "":
		return fmt.Sprintf("matches %q", c.Matches)
	}
	return fmt.Sprintf("== %v", c.Equals.V)
}

// predicates counts the predicates set.
func (c *Condition) predicates() int {
	n := 0
	for _, set := range []bool{c.Equals.IsSet(), c.AtLeast != nil, c.Above != nil, c.AtMost != nil, c.Below != nil, c.Matches != ""} {
		if set {
			n++
		}
	}
	return n
}

// Call is one request shape. Exactly one protocol key is set.
type Call struct {
	HTTP     *HTTPCall     `yaml:"http" doc:"An HTTP request."`
	JSONRPC  *JSONRPCCall  `yaml:"jsonrpc" doc:"A JSON-RPC 2.0 request over HTTP."`
	GRPC     *GRPCCall     `yaml:"grpc" doc:"A gRPC call."`
	WS       *WSCall       `yaml:"ws" doc:"A JSON-RPC 2.0 request over WebSocket."`
	AMQP     *AMQPCall     `yaml:"amqp" doc:"Publish and consume through an AMQP 0-9-1 broker."`
	CometBFT *CometBFTCall `yaml:"cometbft" doc:"Transactions to a CometBFT node over WebSocket, each carrying CometBFT's loadtime payload (send time, run id, connections, rate, size)."`
	TCP      *TCPCall      `yaml:"tcp" doc:"A request over plain TCP, one answer per request (a line protocol, or length-prefixed answers); endpoint host:port."`
	Endpoint string        `yaml:"endpoint" doc:"Which of the target's endpoints to call; default the one named after the protocol, or the only one."`
	Unit     string        `yaml:"unit" doc:"What one unit of work is: request (default) or message (each streamed or consumed message)."`
	// Values give each request of a scenario's load its own values.
	Values map[string]Value `yaml:"values" doc:"Per-request values by name, which the request's path, headers, body, params, request, metadata or send name as ${NAME} (a feeder's column as ${NAME.COLUMN}): a generator, {seq: {from: 1}}, {uniform: {min: 1, max: 100}}, {float: {min: 0, max: 1}}, {choice: [a, b]} (or {choice: {values: [a, b], weights: [9, 1]}}), {zipf: {n: 1000, s: 1.1}}, {bytes: 16}, {hex: 32}, {time: unix_ms}; or a feeder, {csv: FILE} or {jsonl: FILE} (relative to the study file) with order sequential (default), random or once (a run ends when its rows do). Request i of every run gets the same values on every target (docs/values.md)."`
	// ValueSpecs are Values parsed, each feeder's path resolved against
	// the study file's directory: set when the study is read; a call made
	// in code sets them itself.
	ValueSpecs map[string]values.Spec `yaml:"-" json:"-"`
	// onceRows are the rows of its shortest feeder read once, when the
	// study was read (0: none).
	onceRows uint64
}

// HTTPCall is an HTTP request.
type HTTPCall struct {
	Method  string            `yaml:"method" doc:"HTTP method; default GET, or POST with a body."`
	Path    string            `yaml:"path" doc:"Path and query appended to the endpoint URL; may use ${env.NAME}, case variables and the call's values (percent-encoded)."`
	Headers map[string]string `yaml:"headers" doc:"Request headers; values may use ${env.NAME} and the call's values."`
	Body    Value             `yaml:"body" doc:"Request body: a string as is, anything else as JSON; its strings may use ${env.NAME}, case variables and the call's values."`
	HTTP2   bool              `yaml:"http2" doc:"Speak HTTP/2: over TLS for https, h2c for http."`
	// Insecure skips the verification of the server's certificate.
	Insecure bool `yaml:"insecure" doc:"Do not verify the server's TLS certificate."`
}

// JSONRPCCall is a JSON-RPC 2.0 request over HTTP.
type JSONRPCCall struct {
	Method  string            `yaml:"method,required" doc:"JSON-RPC method; may use ${env.NAME}."`
	Params  Value             `yaml:"params" doc:"Params: a list or an object; its strings may use ${env.NAME}, case variables and the call's values."`
	Path    string            `yaml:"path" doc:"Path appended to the endpoint URL; may use ${env.NAME}."`
	Headers map[string]string `yaml:"headers" doc:"Request headers, e.g. Authorization; values may use ${env.NAME} and the call's values."`
	HTTP2   bool              `yaml:"http2" doc:"Speak HTTP/2: over TLS for https, h2c for http."`
	// Insecure skips the verification of the server's certificate.
	Insecure bool `yaml:"insecure" doc:"Do not verify the server's TLS certificate."`
}

// GRPCCall is a gRPC call.
type GRPCCall struct {
	Method      string            `yaml:"method,required" doc:"Full method name, package.Service/Method."`
	Request     Value             `yaml:"request" doc:"The request message in protobuf's JSON form; its strings may use ${env.NAME}, case variables and the call's values."`
	Proto       []string          `yaml:"proto" doc:".proto files that define the service; default: server reflection."`
	ImportPaths []string          `yaml:"import_paths" doc:"Directories searched for the .proto files' imports."`
	Metadata    map[string]string `yaml:"metadata" doc:"Request metadata (headers); values may use ${env.NAME} and the call's values."`
}

// WSCall is a JSON-RPC 2.0 request over WebSocket.
type WSCall struct {
	Method string `yaml:"method,required" doc:"JSON-RPC method; may use ${env.NAME}."`
	Params Value  `yaml:"params" doc:"Params: a list or an object; its strings may use ${env.NAME}, case variables and the call's values."`
	Path   string `yaml:"path" doc:"Path appended to the endpoint URL; may use ${env.NAME}."`
}

// AMQPCall publishes and consumes messages through a broker.
type AMQPCall struct {
	Queue     string `yaml:"queue" doc:"Queue name prefix; tandem adds a unique suffix per run."`
	QueueType string `yaml:"queue_type" doc:"classic (default) or quorum."`
	Prefetch  int    `yaml:"prefetch" doc:"Consumer prefetch window."`
	Size      int    `yaml:"size" doc:"Message body size in bytes."`
	Confirm   bool   `yaml:"confirm" doc:"Wait for publisher confirms."`
	Ack       string `yaml:"ack" doc:"each (default), multiple or auto."`
}

// Startup configures the startup study.
type Startup struct {
	Runs int `yaml:"runs,required" doc:"Starts from empty per target."`
}

// Scenario is one experiment.
type Scenario struct {
	Name   string  `yaml:"name,required" doc:"Unique name of the scenario."`
	Call   string  `yaml:"call" doc:"The call every request makes; instead of it a scenario may name calls (a mix), flow or replay (a recording's requests). Exactly one of the four."`
	Replay *Replay `yaml:"replay" doc:"Instead of a call: a recording's requests (tandem record), request k of every run the k-th recorded, on the recorded timetable ÷ speed (an open loop over load.connections), or with load.concurrency a closed loop; {recording, speed, loop, endpoint}."`
	// Calls and Flow send several calls (flow.go).
	Calls    []MixCall     `yaml:"calls" doc:"A mix instead of one call: each request is one of these calls, drawn by weight from the study's seed, the scenario's name and the request's number, so every target gets the same sequence; each call is also summarised and judged on its own. The calls are of one protocol (http, jsonrpc or grpc) and go to one endpoint: one connection carries them all."`
	Flow     []FlowStep    `yaml:"flow" doc:"A flow instead of one call, in a closed loop: each client runs the steps in order, again and again; a step's captures take values from its answer into later steps' ${NAME}, each client its own. The headline is one pass's latency; each step is also summarised and judged on its own."`
	Load     Load          `yaml:"load" doc:"The load shape: concurrency (closed loop), rate and connections (open loop) or batch (batched loop); required unless sweep is given."`
	Sweep    *Sweep        `yaml:"sweep" doc:"A saturation sweep: one cell per (connections, rate), or a search for the highest sustainable rate, instead of rounds."`
	Metric   string        `yaml:"metric" doc:"The headline value: latency (median, lower is better; default), throughput (units/s, higher is better) or recovery (with perturbations: the longest time until the load recovered and the target answered again, lower is better)."`
	Duration time.Duration `yaml:"duration" doc:"Length of each measured run; with neither duration nor requests, calibration picks the count."`
	Requests int64         `yaml:"requests" doc:"Requests in each measured run."`
	Rounds   int           `yaml:"rounds" doc:"Measured rounds per target, a fixed design; default defaults.rounds (or adaptive rounds, when that is left out too)."`
	// Adaptive is set when neither the scenario nor the defaults fix
	// its rounds under the shift rule: Rounds is then the budget's most.
	Adaptive bool     `yaml:"-"`
	Targets  []string `yaml:"targets" doc:"The targets this scenario measures; default all."`
	// Perturbations are done to the targets during every measured round.
	Perturbations []Perturbation `yaml:"perturbations" doc:"Faults done to a target while each measured round's load runs (kill, stop, pause, restart, wipe-and-restart, or on its network path disconnect, partition, degrade), each timed from the round's start; the recovery is measured."`
}

// Perturbation actions.
const (
	ActionKill           = "kill"
	ActionStop           = "stop"
	ActionPause          = "pause"
	ActionRestart        = "restart"
	ActionWipeAndRestart = "wipe-and-restart"
	// The network perturbations, done to the generator's path to a target
	// (docs/network.md).
	ActionDisconnect = "disconnect"
	ActionPartition  = "partition"
	ActionDegrade    = "degrade"
)

// Perturbation is a fault done to a target while a round's load runs.
type Perturbation struct {
	At     time.Duration `yaml:"at,required" doc:"When, from the start of the round's load."`
	Action string        `yaml:"action,required" doc:"kill (SIGKILL to its process group, then started again), stop (SIGTERM, then started again after for), pause (SIGSTOP for for, then SIGCONT), restart (SIGTERM, started again at once), wipe-and-restart (SIGTERM, its start.wipe paths removed and start.init run again, then started); on the generator's path to the target: disconnect (every connection reset, and each new one, for for), partition (nothing crosses and nothing is reset for for) or degrade (the conditions of network for for)."`
	For    time.Duration `yaml:"for" doc:"How long the target stays stopped, killed or paused before it is started again or resumed, or its path disconnected, partitioned or degraded; required for pause, disconnect, partition and degrade, default 0 (at once) for the others."`
	Every  time.Duration `yaml:"every" doc:"Repeat every so long from at, while the round lasts; default once."`
	Target string        `yaml:"target" doc:"The target it is done to; default each target of the scenario, in its own rounds."`
	Node   string        `yaml:"node" doc:"In a group target: the node it is done to, by name (full0); default the first node of role, else the group's first node."`
	Role   string        `yaml:"role" doc:"In a group target: with every, the nodes of this role in turn (full0, full1, full0, …)."`
	Pick   *NodePick     `yaml:"pick" doc:"In a group target: the node chosen by what the nodes report when the perturbation fires (the current leader, the highest node); with role, among that role's nodes."`
	// Sides split a group with links between its nodes: a network
	// perturbation is then done to every link between two sides.
	Sides [][]string `yaml:"sides" doc:"With disconnect, partition or degrade on a group with links between its nodes: the group split in sides, each a list of node or region names ([[eu], [us]], [[validator0, validator1], [validator2]]); every link between nodes of two sides is cut (held, degraded) for for, the links within a side pass. The nodes in no side form one more side."`
	// Generator also does a network perturbation on a group with links
	// between its nodes to the generator's path to the node.
	Generator bool `yaml:"generator" doc:"With disconnect, partition or degrade on a group with links between its nodes: the generator's path to the node is cut (held, degraded) too, not only its links to its peers."`
	// Network is a degrade's conditions.
	Network *Network `yaml:"network" doc:"With degrade: the path's conditions while it lasts; its keys replace the target's network's, the others stay."`
}

// NodePick chooses a group's node by asking each node a call when a
// perturbation fires: the node whose answer's field equals a value (or
// another field of its own answer), or whose field is the highest or the
// lowest number.
type NodePick struct {
	Call  string `yaml:"call,required" doc:"The call asked of every node."`
	Field string `yaml:"field,required" doc:"The field of its answer, as a path (result.leader, header.member_id)."`
	// Equals is a value the field must have: ${node.name}, ${node.index},
	// ${node.host} and ${node.role} are the asked node's.
	Equals      string `yaml:"equals" doc:"The node whose field is this text (${node.name}, ${node.index}, ${node.host} and ${node.role} are the asked node's own)."`
	EqualsField string `yaml:"equals_field" doc:"The node whose field equals this other field of its own answer (a Raft member whose leader is its own id)."`
	Highest     bool   `yaml:"highest" doc:"The node whose field is the highest number (the tallest chain)."`
	Lowest      bool   `yaml:"lowest" doc:"The node whose field is the lowest number."`
}

// Load is a scenario's load shape.
type Load struct {
	Concurrency IntList `yaml:"concurrency" doc:"Closed loop: clients, each waiting for its answer; a list gives one row per level."`
	Rate        float64 `yaml:"rate" doc:"Open loop: total arrivals per second, constant."`
	Ramp        *Ramp   `yaml:"ramp" doc:"Open loop: a rate that goes linearly from one value to another over the run."`
	Steps       []Step  `yaml:"steps" doc:"Open loop: constant rates one after another."`
	Batch       *Batch  `yaml:"batch" doc:"Batched loop: requests per period on every connection (CometBFT's load-runner shape)."`
	Connections int     `yaml:"connections" doc:"Open and batched loops: connections the load is spread over; default 1."`
	MaxWaiting  int     `yaml:"max_waiting" doc:"Open loop: arrivals that may wait for a free connection before arrivals are dropped; default 10000."`
	Engine      string  `yaml:"engine" doc:"Closed and open loops: loop (one thread owns every connection; in an open loop it sleeps through the answers, which the kernel stamps: less CPU per request; HTTP/1.1, HTTP/2, JSON-RPC and gRPC on Linux) or workers (a goroutine per connection, any protocol). Default: loop wherever it applies, else workers; each sample records the engine that ran."`
	// Quantum is the event loop's wake-up quantum.
	Quantum time.Duration `yaml:"quantum" doc:"On the event loop (engine loop, or no engine over HTTP or JSON-RPC): wake at most once per quantum. An open loop sends every arrival due by then (the lateness shows in schedule lag and latency); a closed loop reads every answer that came by then (the wait shows in think time). Default 0: a wake-up per arrival or answer."`
}

// Sweep is a saturation sweep: each cell runs one (connections, rate)
// pair for a duration and counts what the target confirmed.
type Sweep struct {
	Connections IntList       `yaml:"connections,required" doc:"Connection counts, one row of cells each."`
	Rate        []float64     `yaml:"rate" doc:"Rates, one cell each: requests per second on each connection."`
	Duration    time.Duration `yaml:"duration,required" doc:"Length of each cell, T: load for T − 1 s, the last second for the answers (a batched cell's last batch never goes), so expected = c·r·(T−1)."`
	Load        string        `yaml:"load" doc:"batched (default: r requests at the start of every second on each connection, CometBFT's load-runner shape) or open (an open loop of c·r arrivals per second in all, spread over c connections)."`
	Confirm     string        `yaml:"confirm" doc:"What counts as processed: answer (default: a successful answer) or cometbft (the transaction is in a committed block)."`
	Endpoint    string        `yaml:"endpoint" doc:"For confirm: cometbft, the target endpoint of the node's RPC (http://…); default rpc."`
	Drain       time.Duration `yaml:"drain" doc:"For confirm: cometbft, how long to wait after a cell for the mempool to empty; default 60s."`
	Shortfall   *float64      `yaml:"shortfall" doc:"The fraction of expected a cell may miss: it is saturated when confirmed < expected × (1 − shortfall). From 0 (any shortfall saturates) to below 1; default 0.05, saturated below 95 % of expected."`
	MaxP99      time.Duration `yaml:"max_p99" doc:"A cell is also saturated when its p99 latency exceeds this; default: no bound."`
	Search      *Search       `yaml:"search" doc:"Instead of a rate list: find the highest sustainable rate by bisection."`
	Quick       *SweepQuick   `yaml:"quick" doc:"The grid under --quick; default: the last connection count, cells of 2s."`
}

// SweepQuick is a sweep's smaller grid for --quick runs.
type SweepQuick struct {
	Connections IntList       `yaml:"connections" doc:"Connection counts."`
	Rate        []float64     `yaml:"rate" doc:"Rates per connection."`
	Duration    time.Duration `yaml:"duration" doc:"Length of each cell."`
}

// Search finds the highest rate a target sustains.
type Search struct {
	From      float64 `yaml:"from,required" doc:"A rate the target sustains (checked first)."`
	To        float64 `yaml:"to,required" doc:"A rate it does not (checked second)."`
	Precision float64 `yaml:"precision" doc:"Stop when the bracket's ratio hi/lo ≤ 1 + precision; default 0.1."`
	Repeats   int     `yaml:"repeats" doc:"Runs of each probed rate; saturated if any run is; default 1."`
}

// CometBFTCall broadcasts transactions to a CometBFT node over its
// WebSocket, each a fresh loadtime payload.
type CometBFTCall struct {
	Method string `yaml:"method" doc:"broadcast_tx_sync (default), broadcast_tx_async or broadcast_tx_commit."`
	Size   int    `yaml:"size" doc:"Transaction size in bytes; default 1024."`
}

// Ramp is a linear rate ramp.
type Ramp struct {
	From float64 `yaml:"from,required" doc:"Arrivals per second at the start."`
	To   float64 `yaml:"to,required" doc:"Arrivals per second at the end."`
}

// Step is one stretch of constant rate.
type Step struct {
	Rate     float64       `yaml:"rate,required" doc:"Arrivals per second."`
	Duration time.Duration `yaml:"duration,required" doc:"How long this rate lasts."`
}

// Batch is r requests per period on each connection.
type Batch struct {
	PerPeriod int           `yaml:"per_period,required" doc:"Requests each connection sends at the start of every period."`
	Period    time.Duration `yaml:"period" doc:"The period; default 1s."`
}

// Kind is how a scenario measures its targets, decided once from its load
// shape, its call and its targets (Study.Kind). Its text is the load model
// recorded in results.json, except for KindBroker.
type Kind string

// The kinds of scenario.
const (
	// KindClosed is a closed loop: clients that each wait for their answer.
	KindClosed Kind = "closed"
	// KindOpen is an open loop: arrivals on a timetable, answered or not.
	KindOpen Kind = "open"
	// KindBatched sends a batch on every connection at the start of every
	// period.
	KindBatched Kind = "batched"
	// KindDrain fills a queue for consumer targets and times their drain.
	KindDrain Kind = "drain"
	// KindBroker publishes and consumes an amqp call's messages through one
	// queue, run whole rather than request by request.
	KindBroker Kind = "broker"
)

// Model is the load shape's model: KindClosed, KindOpen or KindBatched.
func (l Load) Model() Kind {
	switch {
	case l.Batch != nil:
		return KindBatched
	case l.Rate > 0 || l.Ramp != nil || len(l.Steps) > 0:
		return KindOpen
	}
	return KindClosed
}

// MetricsConfig says which Prometheus series to keep and how often to
// scrape them.
type MetricsConfig struct {
	Series   []string      `yaml:"series" doc:"Metric family names to keep; default CometBFT's consensus and mempool figures and the process's memory and CPU."`
	Interval time.Duration `yaml:"interval" doc:"Time between scrapes (a Prometheus query's step); default 1s, or a fifth of the shortest batch period (a batched sweep's 1 s: 200ms) so that gauges rising and falling within a period are seen."`
	// Prometheus, when set, replaces scraping: the series are queried
	// from this server for the run's window when the run ends.
	Prometheus string `yaml:"prometheus" doc:"A Prometheus server's URL (may use ${env.NAME}): instead of scraping, query it (query_range) for each target's series over the run's window; targets name their series by metrics_labels."`
}

// CostSpec is one command whose cost per operation is counted.
type CostSpec struct {
	Name          string            `yaml:"name,required" doc:"The cost's name in the results."`
	Command       []string          `yaml:"command,required" doc:"argv, with {ops} where the operation count goes; placeholders ${tandem} and ${env.NAME} allowed."`
	Ops           int               `yaml:"ops" doc:"N: the slopes are (X(2N) − X(N)) / N and (X(4N) − X(2N)) / 2N; default 1000."`
	ToggleCollect string            `yaml:"toggle_collect" doc:"Count instructions only inside functions matching this (callgrind's --toggle-collect)."`
	Env           map[string]string `yaml:"env" doc:"Added to the command's environment (e.g. GOGC: \"off\" for a Go program)."`
}

// Compat configures the differential tests.
type Compat struct {
	Reference string             `yaml:"reference" doc:"The target the others are held against; default the baseline."`
	Targets   []string           `yaml:"targets" doc:"The targets under test; default every target that is not an oracle or the noise instance."`
	Noise     string             `yaml:"noise" doc:"Marks fields that differ between identical builds as noise: again (ask the reference twice) or the name of a second instance of the reference."`
	File      string             `yaml:"file" doc:"A YAML file of further cases (a cases: list), relative to the study file."`
	Oracles   map[string]*Oracle `yaml:"oracles" doc:"Answer sources that are not under test, by name."`
	Cases     []Case             `yaml:"cases" doc:"The cases."`
	Order     CaseOrder          `yaml:"order" doc:"How each case's vary values are sent unless the case says: parallel (default: up to 8 at a time, each to every target in turn) or listed (one at a time, each to every target in turn, the next after the last answer)."`

	// Recordings are replayed after the cases (recording.go).
	Recordings []Recording `yaml:"recordings" doc:"Recordings (tandem record) whose every exchange is a case, after the listed cases: a file name, or {file, endpoint, mode, ignore}."`
}

// Case is one compat request pattern.
type Case struct {
	Call   string           `yaml:"call,required" doc:"The call to send."`
	Vary   map[string]Value `yaml:"vary" doc:"Case variable → list of values or a generator (sample, boundaries, invalid, duplicates); several variables give their cartesian product."`
	Mode   string           `yaml:"mode" doc:"equal (default): answers must agree; report: shown but not held to equality (tip- or time-dependent answers)."`
	Ignore []string         `yaml:"ignore" doc:"Field paths left out of the comparison; * matches any key, [*] any index."`
	Oracle *CaseOracle      `yaml:"oracle" doc:"Checks of every target's answer against an oracle's."`
	// Order and Capture: compat.go, CaseOrder and CapturesUsed.
	Order   CaseOrder         `yaml:"order" doc:"How the case's vary values are sent: parallel (up to 8 at a time) or listed (one at a time, in the cartesian product's order, each to every target in turn, the next after the last answer); default compat.order. A case that makes or uses a capture is listed."`
	Capture map[string]string `yaml:"capture" doc:"Case variable → field path in each target's answer: later cases use ${NAME}, each target its own value (an empty path: the whole answer). A capture that finds nothing makes the cases that use it not sent."`
}

// CaseOrder is how the values of a compat case's vary are sent.
type CaseOrder string

// Compat case orders.
const (
	// OrderParallel sends up to 8 of a case's values at a time, each to
	// every target in turn (the default).
	OrderParallel CaseOrder = "parallel"
	// OrderListed sends them one at a time, each to every target in
	// turn, the next only after the last answer.
	OrderListed CaseOrder = "listed"
)

// Oracle is a reference answer source that is not under test: a target
// of the study, or a JSON-RPC (or HTTP) endpoint.
type Oracle struct {
	Target string `yaml:"target" doc:"A target of the study (it is then not under test)."`
	URL    string `yaml:"url" doc:"The endpoint URL of a server that tandem does not start; may use ${env.NAME}."`
}

// CaseOracle asks an oracle the same question in its own terms.
type CaseOracle struct {
	Name   string  `yaml:"name,required" doc:"The oracle, from compat.oracles."`
	Call   string  `yaml:"call,required" doc:"The call to send to the oracle; its request may use the case's variables."`
	Checks []Check `yaml:"checks,required" doc:"Field assertions between each target's answer and the oracle's."`
}

// Check is one field assertion against an oracle.
type Check struct {
	Path   string `yaml:"path,required" doc:"Field path in the target's answer; [*] collects every element."`
	Oracle string `yaml:"oracle,required" doc:"Field path in the oracle's answer."`
	Rule   string `yaml:"rule" doc:"equal (default), reversed (equal after reversing the bytes of a hex or base64 value) or set (the same elements in any order, duplicates ignored)."`
	Same   Value  `yaml:"same" doc:"Groups of values treated as equal, e.g. [[0, null]]."`
}
