// Package results defines results.json, the one file every tandem run writes
// and every report is recomputed from. The schema is versioned
// ("tandem.results/v1"): additions keep the major version, renames do not.
// Write is atomic, so a reader never sees half a file; Read refuses a major
// version it does not know.
package results

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/tandem-bench/tandem/stats"
)

// Schema is the schema identifier this package writes.
const Schema = "tandem.results/v1"

const schemaPrefix = "tandem.results/v"

// Results is the top level of results.json.
type Results struct {
	Schema    string    `json:"schema"`
	Tool      Tool      `json:"tool"`
	Study     Study     `json:"study"`
	CreatedAt time.Time `json:"created_at"`
	// Interrupted is true when the run was cancelled: what is here is valid
	// but incomplete.
	Interrupted bool    `json:"interrupted"`
	Machine     Machine `json:"machine"`
	// Services are the study's shared infrastructure.
	Services  []Service  `json:"services,omitempty"`
	Targets   []Target   `json:"targets"`
	Scenarios []Scenario `json:"scenarios"`
	Compat    *Compat    `json:"compat"`
	Sweeps    []Sweep    `json:"sweeps"`
	Findings  []Finding  `json:"findings"`
	// Costs are the study's counted costs (tandem cost, per study).
	Costs []Cost `json:"costs,omitempty"`
	// Warnings are things a reader of the numbers should know.
	Warnings []string `json:"warnings"`
	// Policy is the verdict policy the comparisons were judged by; tandem
	// compare judges by it too. Absent in files written before it was
	// recorded: the default policy applies.
	Policy *stats.Policy `json:"policy,omitempty"`
	// Family is the study-wide error control over the run's
	// comparisons.
	Family *Family `json:"family,omitempty"`
}

// FamilyHolm names Holm's step-down procedure.
const FamilyHolm = "holm"

// Family is how the false-alarm rate of a set of comparisons is held
// together: during a run each comparison is judged at Alpha/Planned
// (Bonferroni over the comparisons the plan had; in tandem compare, over
// the rows both runs have), and at the end Holm's step-down over the Size
// comparisons that reached the speed rule may decide more (Upgraded of
// them).
type Family struct {
	Method   string  `json:"method"`
	Alpha    float64 `json:"alpha"`
	Planned  int     `json:"planned,omitempty"`
	Size     int     `json:"size"`
	Upgraded int     `json:"upgraded"`
}

// Tool names the tandem that wrote the file.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Settings are the Go build settings of the binary (vcs.revision, -race, …).
	Settings map[string]string `json:"settings,omitempty"`
}

// Study identifies the study that ran.
type Study struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	File        string `json:"file,omitempty"`
	// ConfigSHA256 is the SHA-256 of the study file's bytes, in hex.
	ConfigSHA256 string `json:"config_sha256"`
	Seed         uint64 `json:"seed"`
	// CommandLine is the tandem command that ran the study.
	CommandLine []string `json:"command_line,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUModel   string `json:"cpu_model"`
	Cores      int    `json:"cores"`
	Kernel     string `json:"kernel"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	GoVersion  string `json:"go_version"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// GeneratorCPUs are the cores the load generator was pinned to, if any.
	GeneratorCPUs []int `json:"generator_cpus,omitempty"`
	// GeneratorCPUNs is the CPU time the generator process used over the run.
	GeneratorCPUNs int64 `json:"generator_cpu_ns"`
}

// Target is one build under test.
type Target struct {
	Name    string   `json:"name"`
	Command []string `json:"command,omitempty"`
	CPUs    []int    `json:"cpus,omitempty"`
	// Startup is the start from empty: the median of StartupRuns when the
	// study starts each target several times.
	Startup     *Startup  `json:"startup"`
	StartupRuns []Startup `json:"startup_runs,omitempty"`
	// StartupVerdict, with three starts or more, holds this target's
	// ready times against the baseline's by the verdict policy (not on the
	// baseline itself).
	StartupVerdict *Comparison `json:"startup_verdict,omitempty"`
	// Nodes are a group target's processes, in order: each node's own
	// start (Startup is then the group's: its first answer is the first
	// node's to answer, ready when every node is, CPU and memory summed).
	Nodes []Node `json:"nodes,omitempty"`
	// RTTNs is the median round trip of RTTCall, the cheapest request,
	// probed outside the rounds.
	RTTNs   int64  `json:"rtt_ns,omitempty"`
	RTTCall string `json:"rtt_call,omitempty"`
	// Network is the generator's path to the target when it went through
	// links (the target's network:, or a network perturbation's
	// pass-through link): each endpoint's link, as configured and as
	// measured when it was opened.
	Network *Network `json:"network,omitempty"`
	// PeerNetwork, for a group with links between its nodes (its
	// network:, regions and latency), is each link as configured.
	PeerNetwork *PeerNetwork `json:"peer_network,omitempty"`
	// DataDir is the absolute path of the target's data directory, when
	// it has one (with --keep-data it is still there after the run).
	DataDir string `json:"data_dir,omitempty"`
	// Metrics is what was scraped from the target's Prometheus endpoint.
	Metrics *Metrics `json:"metrics,omitempty"`
	// Error says why the target failed, if it did, with evidence (exit
	// status, last log lines).
	Error string `json:"error,omitempty"`
}

// Network is the generator's path to a target through links.
type Network struct {
	// Seed seeds the links' jitter and loss draws.
	Seed uint64 `json:"seed"`
	// Via is "kernel" when the kernel does the links' loss and bandwidth
	// (absent: tandem's own links do everything).
	Via string `json:"via,omitempty"`
	// Up and Down are the conditions configured on each link, from the
	// generator to the target and back.
	Up   LinkConditions `json:"up"`
	Down LinkConditions `json:"down"`
	// Links are the target's endpoints' links, by endpoint name.
	Links []Link `json:"links"`
}

// PeerNetwork is the links between a group's nodes.
type PeerNetwork struct {
	// Seed seeds the links' jitter and loss draws.
	Seed uint64 `json:"seed"`
	// Via is "kernel" when the kernel does the links' loss and bandwidth
	// (absent: tandem's own links do everything).
	Via string `json:"via,omitempty"`
	// Links are the links one node dials another's port through, in the
	// order they were opened.
	Links []PeerLink `json:"links"`
}

// PeerLink is the link from one node of a group to another's port: where
// From dials (Listen) instead of To's own address (Upstream), and the
// conditions each way (Up: what From sends).
type PeerLink struct {
	From string `json:"from"`
	To   string `json:"to"`
	Port string `json:"port"`
	// FromRegion and ToRegion are the nodes' regions, if they have one.
	FromRegion string         `json:"from_region,omitempty"`
	ToRegion   string         `json:"to_region,omitempty"`
	Listen     string         `json:"listen"`
	Upstream   string         `json:"upstream"`
	Up         LinkConditions `json:"up"`
	Down       LinkConditions `json:"down"`
	// MeasuredUp and MeasuredDown are what crossed the link each way
	// while it was open; absent until it closed.
	MeasuredUp   *LinkFlow `json:"measured_up,omitempty"`
	MeasuredDown *LinkFlow `json:"measured_down,omitempty"`
}

// LinkFlow is what crossed one direction of a link while it was open.
type LinkFlow struct {
	// Bytes were delivered, in Pieces (chunks read, cut by the bandwidth
	// cap and by lost segments).
	Bytes  int64 `json:"bytes"`
	Pieces int64 `json:"pieces"`
	// MeanHeldNs and MaxHeldNs are the pieces' mean and longest time in
	// the link, from read to written: the one-way delay the link itself
	// added (a partition's hold included; through the kernel, the time
	// in the veth pair not).
	MeanHeldNs int64 `json:"mean_held_ns"`
	MaxHeldNs  int64 `json:"max_held_ns"`
	// Lost counts lost segments (tandem's link) or dropped TCP packets of
	// Packets that arrived (the kernel's); Overflow, through the kernel,
	// the packets its rate cap dropped because its queue was full.
	Lost     int64 `json:"lost"`
	Packets  int64 `json:"packets,omitempty"`
	Overflow int64 `json:"overflow,omitempty"`
}

// LinkConditions are one direction's conditions of a link.
type LinkConditions struct {
	DelayNs  int64 `json:"delay_ns,omitempty"`
	JitterNs int64 `json:"jitter_ns,omitempty"`
	// Distribution is how the jitter spreads: uniform or normal.
	Distribution string `json:"distribution,omitempty"`
	// Loss is the chance that a segment is lost, a fraction.
	Loss float64 `json:"loss,omitempty"`
	// BandwidthBytesPerS caps the direction (0: no cap).
	BandwidthBytesPerS int64 `json:"bandwidth_bytes_per_s,omitempty"`
	ResetAfterNs       int64 `json:"reset_after_ns,omitempty"`
	ResetAfterBytes    int64 `json:"reset_after_bytes,omitempty"`
}

// Link is one endpoint's link: where the generator dialled instead of the
// endpoint, and the round trip measured through it and around it.
type Link struct {
	// Node is the group's node whose endpoint it is; absent on a target
	// of one process.
	Node     string `json:"node,omitempty"`
	Endpoint string `json:"endpoint"`
	// Upstream is the endpoint's host:port; Listen the link's.
	Upstream string `json:"upstream"`
	Listen   string `json:"listen"`
	// RTTNs is the median round trip of RTTCall through the link, and
	// DirectRTTNs the same straight to the target, of RTTSamples asks each
	// when the link was opened; absent when the endpoint has no call to
	// time (the target's ready.first_answer call goes to another endpoint,
	// or it has none) or every ask failed.
	RTTCall     string `json:"rtt_call,omitempty"`
	RTTSamples  int    `json:"rtt_samples,omitempty"`
	RTTNs       int64  `json:"rtt_ns,omitempty"`
	DirectRTTNs int64  `json:"direct_rtt_ns,omitempty"`
	// Note says why the round trip was not measured, if it was not.
	Note string `json:"note,omitempty"`
	// MeasuredUp and MeasuredDown are what crossed the link each way
	// while it was open; absent until it closed.
	MeasuredUp   *LinkFlow `json:"measured_up,omitempty"`
	MeasuredDown *LinkFlow `json:"measured_down,omitempty"`
}

// Startup is what starting a target from empty cost.
// Node is one process of a group target.
type Node struct {
	Name    string   `json:"name"`
	Role    string   `json:"role"`
	Index   int      `json:"index"`
	Command []string `json:"command"`
	// Endpoints are the node's, resolved.
	Endpoints map[string]string `json:"endpoints"`
	Startup   *Startup          `json:"startup,omitempty"`
	Error     string            `json:"error,omitempty"`
}

type Startup struct {
	// FirstAnswerNs is the time from start to the first successful answer.
	FirstAnswerNs int64 `json:"first_answer_ns"`
	// ReadyNs is the time from start until the ready condition held.
	ReadyNs int64 `json:"ready_ns"`
	// CPUNs is the CPU time of the target's process tree until ready.
	CPUNs        int64 `json:"cpu_ns"`
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// DiskBytes is what the data dir takes once ready: the bytes of the
	// blocks its files hold, as du shows.
	DiskBytes int64 `json:"disk_bytes"`
	// DiskApparentBytes is the sum of its files' sizes (preallocated or
	// sparse files make it larger than DiskBytes).
	DiskApparentBytes int64 `json:"disk_apparent_bytes,omitempty"`
}

// Scenario is one experiment and everything measured in it.
type Scenario struct {
	Name string `json:"name"`
	Call string `json:"call"`
	// Metric is what a round's headline value is: "latency_p50_ns" or
	// "units_per_s".
	Metric string `json:"metric"`
	// Direction is lower or higher: which headline value is better.
	Direction Direction `json:"direction"`
	Unit      string    `json:"unit"`
	Load      Load      `json:"load"`
	// Requests is the request count of each measured run, frozen by
	// calibration; 0 when runs are bounded by duration alone.
	Requests int64 `json:"requests"`
	// DurationNs bounds each run's time.
	DurationNs  int64        `json:"duration_ns"`
	Rounds      []Round      `json:"rounds"`
	Summary     []Summary    `json:"summary"`
	Comparisons []Comparison `json:"comparisons"`
	// Values, for a call with values, fingerprints the values its
	// requests took: every run of every target numbers its requests from
	// 0, so one digest over the most requests any run rendered covers
	// them all.
	Values *ValuesDigest `json:"values,omitempty"`
	// Replay, for a scenario that replayed a recording (its Call is then
	// "replay FILE"), names the recording and how it was replayed.
	Replay *ReplayedLoad `json:"replay,omitempty"`
	// Kind, for a scenario of several calls, is "mix" (each request one
	// of its calls, drawn by weight) or "flow" (each request a pass of
	// its steps); absent for one call. Each call of a mix and each step
	// of a flow is then a scenario of its own that follows it (Part).
	Kind string `json:"kind,omitempty"`
	// Picks, for a mix, fingerprints the calls its requests were drawn
	// as: SHA256 over the picks of requests 0 to Requests−1, which covers
	// every run of every target as Values does.
	Picks *ValuesDigest `json:"picks,omitempty"`
	// Part, for a call of a mix or a step of a flow, says whose part the
	// scenario is: its rounds are the part's own samples of the same
	// runs as the whole scenario's rounds, judged as any scenario's.
	Part *Part `json:"part,omitempty"`
}

// ReplayedLoad is the recording a scenario replayed as its load: request
// k of every run was its k-th request, in the order they arrived.
type ReplayedLoad struct {
	// File is the recording as the study names it; SHA256 the hex digest
	// of its bytes, Exchanges its exchange count and SpanNs the time from
	// its first request to its last.
	File      string `json:"file"`
	SHA256    string `json:"sha256"`
	Exchanges int    `json:"exchanges"`
	SpanNs    int64  `json:"span_ns"`
	// Speed divided the recorded offsets (1 in a closed loop, which sends
	// as fast as its clients go); Loop says the recording started again
	// after its last request.
	Speed float64 `json:"speed"`
	Loop  bool    `json:"loop,omitempty"`
}

// Scenario kinds of several calls (Scenario.Kind).
const (
	KindMix  = "mix"
	KindFlow = "flow"
)

// Part is what a part scenario is part of: the scenario (Of, a mix or a
// flow), its place in it (Index, from 0: a mix's call in the study's
// order, a flow's step) and, for a mix's call, its weight and share of
// the weights.
type Part struct {
	Of     string  `json:"of"`
	Index  int     `json:"index"`
	Weight float64 `json:"weight,omitempty"`
	Share  float64 `json:"share,omitempty"`
}

// ValuesDigest is the digest of a scenario's values (docs/values.md):
// SHA256 over the values of requests 0 to Requests−1.
type ValuesDigest struct {
	Requests uint64 `json:"requests"`
	SHA256   string `json:"sha256"`
}

// Direction says which of a scenario's headline values is better.
type Direction string

// The directions.
const (
	Lower  Direction = "lower"
	Higher Direction = "higher"
)

// Model is a scenario's load model.
type Model string

// The load models: a closed, an open or a batched loop, or consumers
// draining a queue tandem filled.
const (
	ModelClosed  Model = "closed"
	ModelOpen    Model = "open"
	ModelBatched Model = "batched"
	ModelDrain   Model = "drain"
)

// Load is a scenario's load shape.
type Load struct {
	// Model is the load's model (a broker's call records its load shape's).
	Model       Model   `json:"model"`
	Concurrency []int   `json:"concurrency,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
	Connections int     `json:"connections,omitempty"`
	// Schedule describes an open loop's timetable, e.g. "ramp 10→100/s over 5s".
	Schedule string `json:"schedule,omitempty"`
	// PerPeriod and PeriodNs describe a batched loop.
	PerPeriod int   `json:"per_period,omitempty"`
	PeriodNs  int64 `json:"period_ns,omitempty"`
	// Prefetch is an AMQP consumer's window: the in-flight window of the
	// server-bound rule.
	Prefetch int `json:"prefetch,omitempty"`
	// Engine is the load engine a closed or open loop asked for, "loop" or
	// "workers" (absent: the loop wherever it applies; each sample records
	// the one that ran); QuantumNs the event loop's wake-up
	// quantum, if one was set.
	Engine    string `json:"engine,omitempty"`
	QuantumNs int64  `json:"quantum_ns,omitempty"`
}

// Service is one piece of shared infrastructure of a study.
type Service struct {
	Name string `json:"name"`
	// Kind is rabbitmq (a private node tandem started), external (a broker
	// named by the environment, not started) or command.
	Kind string `json:"kind"`
	// Endpoints are its addresses, passwords hidden.
	Endpoints map[string]string `json:"endpoints,omitempty"`
	// StartNs is how long it took to come up.
	StartNs int64  `json:"start_ns,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Round is one measured run of one scenario on one target.
type Round struct {
	Round       int    `json:"round"`
	Order       int    `json:"order"`
	Target      string `json:"target"`
	Concurrency int    `json:"concurrency,omitempty"`
	Sample
	// Headline is the round's value of the scenario's metric.
	Headline float64 `json:"headline"`
	// GeneratorCPUNs is the CPU time tandem used during the round, and
	// GeneratorCPUUse that time as a share of the generator's cores; on
	// the event loop, the loop thread's own work (EngineCPUNs) as a share
	// of the one core it runs on.
	GeneratorCPUNs  int64   `json:"generator_cpu_ns"`
	GeneratorCPUUse float64 `json:"generator_cpu_use"`
	// Failed is true when the round did not complete; Error says why.
	Failed bool   `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
	// Perturbations are the faults done to the target during the round,
	// with what they did to it and to the load.
	Perturbations []Perturbation `json:"perturbations,omitempty"`
}

// Perturbation is one fault done to a target during a round: when, how
// long the target was down, when it answered again, and what the load saw.
// Durations after the action count from Time.
type Perturbation struct {
	Action string `json:"action"`
	Target string `json:"target"`
	// Node is the group's node it was done to ("" for a target of one
	// process).
	Node string `json:"node,omitempty"`
	// Sides are the node names of each side of a group's split (the
	// perturbation's sides, regions resolved, and the nodes in none).
	Sides [][]string `json:"sides,omitempty"`
	// Chosen says how a pick chose Node when the perturbation fired: the
	// call, the field and what each node answered.
	Chosen string `json:"chosen,omitempty"`
	// Time is when the action began; AtNs the same from the start of the
	// round's load.
	Time time.Time `json:"time"`
	AtNs int64     `json:"at_ns"`
	// DownNs is how long the target was out: from the action until it was
	// started again (kill, stop, restart, wipe-and-restart) or resumed
	// (pause).
	DownNs int64 `json:"down_ns"`
	// AnswersAfterNs is until tandem's probe (the target's ready check)
	// had a first answer again; ReadyAfterNs until its ready condition
	// held again. 0 when it never did (see Error).
	AnswersAfterNs int64 `json:"answers_after_ns"`
	ReadyAfterNs   int64 `json:"ready_after_ns"`
	// CaughtUpNs, for a group with a height probe, is until the node's
	// height reached the highest of the others' (0 when it never did;
	// see Error); BehindAtReady how many heights it was behind when it
	// was ready again.
	CaughtUpNs    int64 `json:"caught_up_ns,omitempty"`
	BehindAtReady int64 `json:"behind_at_ready,omitempty"`
	// Errors counts the load's failed answers from the action until the
	// next perturbation or the round's end; FirstErrorNs and LastErrorNs
	// bound when they ended, to the timeline's step (10 ms).
	Errors int64 `json:"errors"`
	// ErrorsWhileDown are those of Errors that ended while the target was
	// down: before it was ready again or, if sooner, before the end of the
	// timeline's step in which the first request was sent that it
	// answered successfully after it was back. What the fault itself
	// cost: the verdicts' health rule leaves them out; later failures
	// (a restarted target answering 503 while it warms up) count.
	ErrorsWhileDown int64 `json:"errors_while_down"`
	FirstErrorNs    int64 `json:"first_error_ns,omitempty"`
	LastErrorNs     int64 `json:"last_error_ns,omitempty"`
	// RecoveredNs is when the load recovered: the end of the last step
	// with a failed answer (0: the load saw no failure).
	RecoveredNs int64 `json:"recovered_ns"`
	// Degraded are a degrade's conditions on the path while it lasted.
	Degraded *Degraded `json:"degraded,omitempty"`
	// The dip: successful answers per second in the second before the
	// action and from the action until the load recovered and the target
	// was ready again; the p99 latency of the successful answers in the
	// last whole second of the series before the action (0 when there is
	// none) and the highest of the seconds during.
	OKPerSBefore float64 `json:"ok_per_s_before"`
	OKPerSDuring float64 `json:"ok_per_s_during"`
	P99BeforeNs  int64   `json:"p99_before_ns,omitempty"`
	P99DuringNs  int64   `json:"p99_during_ns,omitempty"`
	// Error says what went wrong with the perturbation itself (the
	// target did not come back); the target is then out of the run.
	Error string `json:"error,omitempty"`
}

// Sample is the outcome of one run of a load executor.
type Sample struct {
	// Requests are the requests that finished, OK those that succeeded:
	// every other finished request is counted in Errors.
	Requests int64 `json:"requests"`
	OK       int64 `json:"ok"`
	// Unfinished counts what was sent and had neither succeeded nor
	// failed when the run's end or an interruption cut it off (a request
	// in flight at a closed loop's end, an AMQP message published and not
	// yet consumed at Ctrl-C): neither in Requests nor a failure nor a
	// latency. The target may have served it. In an open or batched loop
	// Requests + Unfinished + Dropped is every arrival offered.
	Unfinished int64 `json:"unfinished,omitempty"`
	// Errors counts failed requests by status (grpc:NOT_FOUND, http:503,
	// jsonrpc:-32602, timeout, refused, reset, …).
	Errors     map[string]int64 `json:"errors"`
	DurationNs int64            `json:"duration_ns"`
	// Throughput is completed requests per second.
	Throughput float64 `json:"throughput"`
	Unit       string  `json:"unit"`
	UnitsPerS  float64 `json:"units_per_s"`
	// LatencyNs is of the successful answers only (a failure is counted in
	// Errors, never timed): measured from the intended send time in open
	// loop, and equal to ServiceTimeNs in closed loop.
	LatencyNs     Distribution  `json:"latency_ns"`
	ServiceTimeNs Distribution  `json:"service_time_ns"`
	ScheduleLagNs *Distribution `json:"schedule_lag_ns,omitempty"`
	Dropped       int64         `json:"dropped"`
	// FirstMessageNs is the time to the first message of a stream.
	FirstMessageNs *Distribution `json:"first_message_ns,omitempty"`
	// ThinkTimeNs (closed loops on the event loop) is the generator's own
	// part of each cycle: from an answer's arrival, as the kernel stamped
	// it, to the next request on its connection.
	ThinkTimeNs *Distribution `json:"think_time_ns,omitempty"`
	// Engine is the load engine that ran a closed or open loop: "loop"
	// (one thread owns every connection) or "workers" (a goroutine per
	// connection); absent for other shapes.
	Engine string `json:"engine,omitempty"`
	// EngineCPUNs (the event loop) is the CPU time of the loop's thread
	// over the run, less its polls for answers that had not yet come:
	// the generator's own work, at most one core.
	EngineCPUNs int64 `json:"engine_cpu_ns,omitempty"`
	// OfferedRate is the schedule's mean arrival rate (open and batched
	// loops); AchievedRate is the rate requests were actually sent at.
	OfferedRate  float64 `json:"offered_rate,omitempty"`
	AchievedRate float64 `json:"achieved_rate"`
	// Series has one row per second of the run.
	Series []Second `json:"series,omitempty"`
	// HDR is the latency histogram in HdrHistogram's V2 compressed
	// encoding, base64.
	HDR string `json:"hdr"`
	// Fleet, for a load run by several workers, says how: the figures
	// above are their tallies added up.
	Fleet *Fleet `json:"fleet,omitempty"`
	// Parts, for a run whose requests fall into parts (a mix's calls, a
	// flow's steps), are each part's own sample, in the parts' order, as
	// load recorded them; the runner records each as a round of the
	// part's own scenario (Scenario.Part), not here.
	Parts []Sample `json:"-"`
}

// Fleet is how a distributed run was made: its workers, their shares of
// the load and how their coordination went.
type Fleet struct {
	// NATS is the messaging server: "embedded" or the URL's host.
	NATS    string        `json:"nats"`
	Workers []FleetWorker `json:"workers"`
	// StartSkewNs is the spread of the workers' actual starts, read on
	// the coordinator's clock through each worker's measured offset.
	StartSkewNs int64 `json:"start_skew_ns"`
	// OnWorkerLoss is fail or continue.
	OnWorkerLoss string `json:"on_worker_loss"`
	// Lost names the workers lost mid-run; Incomplete those whose tallies
	// did not all arrive (the figures miss part of their load).
	Lost       []string `json:"lost,omitempty"`
	Incomplete []string `json:"incomplete,omitempty"`
	// Duplicates counts tallies received twice (each added once).
	Duplicates int64 `json:"duplicates"`
	// Messages and Bytes are what the coordinator received per second of
	// the run from all workers: the coordination path's cost.
	MessagesPerS float64 `json:"messages_per_s"`
	BytesPerS    float64 `json:"bytes_per_s"`
}

// FleetWorker is one worker of a distributed run: its share as configured
// and what it achieved.
type FleetWorker struct {
	ID    string `json:"id"`
	Host  string `json:"host,omitempty"`
	Index int    `json:"index"`
	// Cores is how many cores its machine has.
	Cores int `json:"cores,omitempty"`
	// Share is the part of the load it was given, in words.
	Share string `json:"share"`
	// ClockOffsetNs is its clock minus the coordinator's; RTTNs the round
	// trip that measured it; StartNs its start after the agreed one.
	ClockOffsetNs int64 `json:"clock_offset_ns"`
	RTTNs         int64 `json:"rtt_ns"`
	StartNs       int64 `json:"start_ns"`
	// Its own figures, from its own record.
	Requests     int64   `json:"requests"`
	OK           int64   `json:"ok"`
	OfferedRate  float64 `json:"offered_rate,omitempty"`
	AchievedRate float64 `json:"achieved_rate"`
	Throughput   float64 `json:"throughput"`
	Dropped      int64   `json:"dropped"`
	// GeneratorCPUNs is the CPU time its process spent on its part.
	GeneratorCPUNs int64 `json:"generator_cpu_ns"`
	// Tallies is how many it sent (and the coordinator received).
	Tallies int64 `json:"tallies"`
	// HDR is its own latency histogram (V2 compressed, base64), for
	// diagnosis: the run's is the sum of its tallies.
	HDR string `json:"hdr,omitempty"`
	// Lost says it went silent mid-run, LostAfterNs when (from the start).
	Lost        bool  `json:"lost,omitempty"`
	LostAfterNs int64 `json:"lost_after_ns,omitempty"`
	// Warnings are its own diagnoses; Error why its part failed.
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// Second is one second of a run: requests sent in it, answers completed in
// it, and the latency percentiles of those answers.
type Second struct {
	T      int64 `json:"t"`
	Issued int64 `json:"issued"`
	OK     int64 `json:"ok"`
	Errors int64 `json:"errors"`
	P50Ns  int64 `json:"p50_ns"`
	P99Ns  int64 `json:"p99_ns"`
}

// Distribution summarises a histogram, in nanoseconds.
type Distribution struct {
	Min  int64   `json:"min"`
	Mean float64 `json:"mean"`
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p999"`
	Max  int64   `json:"max"`
}

// Summary is one target's best, median and worst headline over the rounds.
type Summary struct {
	Target      string  `json:"target"`
	Concurrency int     `json:"concurrency,omitempty"`
	N           int     `json:"n"`
	Best        float64 `json:"best"`
	Median      float64 `json:"median"`
	Worst       float64 `json:"worst"`
	// Spread is |best − worst|.
	Spread float64 `json:"spread"`
}

// Comparison holds a candidate target against the baseline on one scenario.
type Comparison struct {
	Base        string `json:"base"`
	Candidate   string `json:"candidate"`
	Concurrency int    `json:"concurrency,omitempty"`
	// Ratio is candidate best / base best of the headline value.
	Ratio float64 `json:"ratio"`
	// Verdict is "faster", "slower", "indistinguishable", "inconclusive"
	// (the interval neither clears no change nor lies within the noise
	// floor), "withheld" (no speed verdict from an unhealthy or too short
	// run), "failing" (the candidate failed more requests than the base)
	// or "noise-reference" (the A/A twin, whose distance is the noise
	// floor).
	Verdict stats.Verdict `json:"verdict"`
	// Reason says how the verdict was reached.
	Reason      string `json:"reason"`
	ServerBound bool   `json:"server_bound"`
	ClientBound bool   `json:"client_bound"`
	// NoiseFloor is the noise floor applied, a fraction: the policy's,
	// raised to the A/A pair's distance at this scenario and level.
	NoiseFloor float64 `json:"noise_floor,omitempty"`
	// Paired is the paired-ratio interval and sign test, with ≥ 6 rounds.
	Paired *Paired `json:"paired,omitempty"`
	// Estimate is the shift rule's: the ratio, its interval and the
	// looks it took (absent under the spread rule and for a verdict the
	// health gate gave).
	Estimate *stats.Estimate `json:"estimate,omitempty"`
	// Unstable names the targets whose rounds scattered beyond the
	// policy's unstable threshold.
	Unstable []string `json:"unstable,omitempty"`
	// Unhealthy names the target whose run withheld the verdict (dropped
	// arrivals, a short rate, more errors than the other), if one did.
	Unhealthy string `json:"unhealthy,omitempty"`
	// TooFewRounds says the verdict was withheld because a target had
	// fewer successful rounds than the policy needs (a gate holds such a
	// row undecided).
	TooFewRounds bool `json:"too_few_rounds,omitempty"`
}

// Paired holds what paired rounds say: ratio rᵢ = candidate / base of
// round i's headline values.
type Paired struct {
	N int `json:"n"`
	// Lo and Hi bound the median ratio with confidence 1 − 2^(1−n).
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	Above      int     `json:"above"`
	Below      int     `json:"below"`
	// SignP is the exact two-sided sign test's p-value.
	SignP float64 `json:"sign_p"`
}

// Compat holds the differential tests' outcome.
type Compat struct {
	// Reference is the target the others are held against; Targets are
	// the targets under test, the reference first.
	Reference string   `json:"reference"`
	Targets   []string `json:"targets"`
	// Noise is how noisy fields were found: "again" (the reference asked
	// twice), a target name (a second instance), or empty.
	Noise string `json:"noise,omitempty"`
	// Seed drove the generated case values.
	Seed  uint64 `json:"seed"`
	Cases []Case `json:"cases"`
	// Matrix counts each agreement per call and target.
	Matrix []MatrixRow `json:"matrix"`
	// Failed counts the equal-mode cases in which some target disagrees
	// with the reference (or an oracle check fails).
	Failed int `json:"failed"`
}

// Agreements of a candidate's answer with the reference's, as compat
// classes them (Answer.Agreement, Case.Agreement, MatrixRow.Counts); two
// answers that failed alike are "both STATUS" (AgreementBoth).
const (
	AgreementIdentical = "identical"
	// AgreementContent is two answers whose contents differ.
	AgreementContent = "content differs"
	// AgreementError is two failures with the same status whose error
	// contents (an HTTP error body, a JSON-RPC error object, a gRPC
	// status) differ.
	AgreementError = "error differs"
	// AgreementStatus is two answers whose statuses differ.
	AgreementStatus = "status differs"
	// AgreementBoth prefixes the status of two answers that failed alike.
	AgreementBoth = "both "
	// AgreementNotSent is a case whose request could not be built.
	AgreementNotSent = "not sent"
)

// Case is one request sent to every target.
type Case struct {
	Call string         `json:"call"`
	Vars map[string]any `json:"vars"`
	// Mode is equal (held to agreement) or report (shown only).
	Mode string `json:"mode"`
	// Agreement is the case's worst agreement over the targets: from
	// worst to best status differs, content differs, error differs, both
	// STATUS, identical; or not sent.
	Agreement string   `json:"agreement"`
	Answers   []Answer `json:"answers"`
	// Differences are the candidates' departures from the reference
	// (at most 100 per target; MoreDifferences counts the rest).
	Differences     []Difference `json:"differences"`
	MoreDifferences int          `json:"more_differences,omitempty"`
	// Noise lists the differences in fields that also differ between
	// identical builds: reported, not held against the candidate.
	Noise  []Difference  `json:"noise,omitempty"`
	Oracle *OracleResult `json:"oracle,omitempty"`
	// Error says why the case could not be sent (e.g. a value the
	// request's type cannot hold).
	Error string `json:"error,omitempty"`
	// Recording, for a case replayed from a recording (compat.recordings),
	// names the exchange; Call is then its label (grpc METHOD, jsonrpc
	// METHOD, http VERB PATH) and Vars is empty.
	Recording *RecordedCase `json:"recording,omitempty"`
	// Order is how the case's values were sent: listed (one at a time,
	// each to every target in turn, the next after the last answer) or
	// parallel (up to 8 at a time). Absent in files written before it.
	Order string `json:"order,omitempty"`
	// Captures are what the case captured for later cases, one per name
	// and target asked; the values themselves are not kept.
	Captures []Capture `json:"captures,omitempty"`
}

// Capture is one value a compat case captured from one target's answer.
type Capture struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	// Path is the field path captured ("" for the whole answer).
	Path string `json:"path"`
	OK   bool   `json:"ok"`
	// Error says why the capture found nothing: no answer, a failed
	// one, or nothing (or null) at the path.
	Error string `json:"error,omitempty"`
}

// RecordedCase is the recorded exchange a case replayed.
type RecordedCase struct {
	// File is the recording as the study names it; Exchange the
	// exchange's index in it (0 for the first, on the file's line 2).
	File     string `json:"file"`
	Exchange int    `json:"exchange"`
	// Protocol is http1, h2, grpc or jsonrpc; Method the HTTP method; Path
	// the request's path, its query left out.
	Protocol string `json:"protocol"`
	Method   string `json:"method"`
	Path     string `json:"path"`
}

// Answer is one target's answer to a case.
type Answer struct {
	Target string `json:"target"`
	// Status is "ok" or tandem's status for the failure (grpc:NOT_FOUND,
	// jsonrpc:-8, http:500, refused, timeout, …).
	Status string `json:"status"`
	// Digest is the SHA-256 of the answer's canonical form (protobuf:
	// each message's deterministic encoding behind its 8-byte length;
	// JSON: canonical JSON); empty for a failure.
	Digest string `json:"digest,omitempty"`
	// Messages counts the answer's messages (more than 1 for a stream).
	Messages int `json:"messages"`
	// Agreement is this answer's agreement with the reference's.
	Agreement string `json:"agreement"`
	// Error says more about a failure without a protocol status, such as
	// a target that could not be reached.
	Error string `json:"error,omitempty"`
}

// Difference is one field where a candidate's answer departs from the
// reference's; Reference and Value are both sides as JSON, shortened for
// display.
type Difference struct {
	Target string `json:"target,omitempty"`
	Path   string `json:"path"`
	// Kind is value, missing, extra, type, ordering, size, byte-order or
	// status.
	Kind      string `json:"kind"`
	Reference string `json:"reference"`
	Value     string `json:"value"`
}

// OracleResult is a case's checks against an oracle's answer.
type OracleResult struct {
	Name   string        `json:"name"`
	Status string        `json:"status"`
	Checks []OracleCheck `json:"checks"`
}

// OracleCheck is one field assertion for one target.
type OracleCheck struct {
	Target      string `json:"target"`
	Path        string `json:"path"`
	OraclePath  string `json:"oracle_path"`
	Rule        string `json:"rule"`
	OK          bool   `json:"ok"`
	Value       string `json:"value"`
	OracleValue string `json:"oracle_value"`
}

// MatrixRow counts the agreements of one target on one call.
type MatrixRow struct {
	Call   string         `json:"call"`
	Target string         `json:"target"`
	Counts map[string]int `json:"counts"`
}

// Cost is the counted cost of one operation: instructions (callgrind) and
// heap allocations (DHAT) per operation as the slopes from N to 2N and
// from 2N to 4N operations, (X(2N) − X(N)) / N and (X(4N) − X(2N)) / 2N;
// or allocations from a Go benchmark.
type Cost struct {
	Name string `json:"name"`
	// Ops is N: the slopes come from runs of N, 2N and 4N operations.
	Ops int `json:"ops"`
	// InstructionsPerOp, AllocationsPerOp and BytesPerOp are the mean of
	// each figure's two slopes: the cost per operation when it is
	// constant; for one that grows (see Growth), a figure of this N only.
	InstructionsPerOp float64 `json:"instructions_per_op"`
	AllocationsPerOp  float64 `json:"allocations_per_op"`
	BytesPerOp        float64 `json:"bytes_per_op"`
	// ColdInstructions and ColdAllocations are the run with one
	// operation: start-up and the first operation.
	ColdInstructions int64 `json:"cold_instructions"`
	ColdAllocations  int64 `json:"cold_allocations"`
	// Exact is true when each figure's slope from N to 2N and from 2N to
	// 4N agree within 1 %: the cost per operation is the same whatever N
	// (for a Go benchmark: when its runs report the same allocations and
	// bytes per op). Inexact names the figures that do not agree:
	// instructions, allocations, bytes; Growth says how each changes.
	Exact   bool     `json:"exact"`
	Inexact []string `json:"inexact,omitempty"`
	// InstructionSlopes and AllocationSlopes are the two measurements:
	// from N to 2N and from 2N to 4N operations. (Files written before
	// Growth was recorded hold two measurements from N to 2N.)
	InstructionSlopes [2]float64 `json:"instruction_slopes"`
	AllocationSlopes  [2]float64 `json:"allocation_slopes"`
	// Growth has, for each figure of Inexact that tandem measured at N,
	// 2N and 4N, its slopes and how the second departs from the first.
	Growth []Growth `json:"growth,omitempty"`
	// Source is valgrind or go-bench.
	Source string `json:"source"`
	// Error says why a study's cost could not be counted.
	Error string `json:"error,omitempty"`
}

// Growth is how one figure's cost per operation changes with the
// operation count.
type Growth struct {
	// Figure is instructions, allocations or bytes.
	Figure string `json:"figure"`
	// Slopes are the figure's cost per operation from N to 2N and from
	// 2N to 4N operations.
	Slopes [2]float64 `json:"slopes"`
	// PerDoubling is Slopes[1] / Slopes[0], how much the cost per
	// operation changes when N doubles: about 2 for a cost quadratic in
	// N, 1 for a linear one; 0 when the first slope is not above 0.
	PerDoubling float64 `json:"per_doubling,omitempty"`
	// Shape is superlinear (the cost per operation grows with N) or
	// sublinear (it falls).
	Shape Shape `json:"shape"`
}

// Shape is how a cost that is not linear in the operation count departs
// from a line.
type Shape string

// The shapes of Growth.
const (
	Superlinear Shape = "superlinear"
	Sublinear   Shape = "sublinear"
)

// Metrics is what tandem scraped from a target's Prometheus endpoint
// during the run.
type Metrics struct {
	URL string `json:"url"`
	// StartUnixNs is when scraping began; points' times count from it.
	StartUnixNs int64 `json:"start_unix_ns"`
	IntervalNs  int64 `json:"interval_ns"`
	// Scrapes counts the attempts; Errors the failed ones (an endpoint
	// that vanished or served garbage), LastError the latest failure.
	Scrapes   int      `json:"scrapes"`
	Errors    int      `json:"errors"`
	LastError string   `json:"last_error,omitempty"`
	Series    []Series `json:"series"`
	// Derived holds the figures a report quotes over the whole run:
	// blocks_per_min, txs_per_min, mempool_size_mean, rss_bytes_max, …
	Derived map[string]float64 `json:"derived"`
	// Families says what the exposition said of each scraped family, by
	// family name (a histogram's, not its _bucket series'), or for series
	// queried from a Prometheus server what its metadata API knows; absent
	// in older files, whose kinds are then inferred from their names.
	Families map[string]MetricFamily `json:"families,omitempty"`
}

// MetricFamily is what an exposition says of one metric family.
type MetricFamily struct {
	// Type is counter, gauge, histogram, summary, gaugehistogram or
	// untyped.
	Type string `json:"type"`
	// Help is the family's HELP text; Unit its UNIT (OpenMetrics), if any.
	Help string `json:"help,omitempty"`
	Unit string `json:"unit,omitempty"`
}

// Series is one scraped time series: points as [t_ns since the metrics'
// start, value].
type Series struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	Points [][2]float64      `json:"points"`
}

// Sweep is one target's saturation sweep: a grid of (connections, rate)
// cells, or a search for the highest sustainable rate.
type Sweep struct {
	Scenario string `json:"scenario"`
	Target   string `json:"target"`
	Call     string `json:"call"`
	// Load is batched (r per second on each connection) or open (c·r per
	// second in all); Confirm is answer or cometbft.
	Load    string `json:"load"`
	Confirm string `json:"confirm"`
	// DBBackend, for confirm cometbft, is the database the node stores its
	// blocks in (goleveldb, pebbledb, …): CometBFT's report tool needs it.
	DBBackend string `json:"db_backend,omitempty"`
	// Rule says when a cell is saturated, e.g. "confirmed < 95 % of
	// expected" (the study's shortfall, 5 % by default).
	Rule  string `json:"rule"`
	Cells []Cell `json:"cells"`
	// Saturation has one entry per connection count.
	Saturation []SaturationPoint `json:"saturation"`
	// Search has the bisection's outcome per connection count, when the
	// sweep searched.
	Search []SearchResult `json:"search,omitempty"`
	// Rounds is how many times the grid ran (each cell's runs carry their
	// round); Summary has one entry per cell over its rounds, and
	// Verdicts, on a target other than the baseline, each cell's verdict
	// against the baseline's same cell.
	Rounds   int           `json:"rounds,omitempty"`
	Summary  []CellSummary `json:"summary,omitempty"`
	Verdicts []CellVerdict `json:"verdicts,omitempty"`
}

// Spread is a figure over rounds: best, median and worst.
type Spread struct {
	Best   float64 `json:"best"`
	Median float64 `json:"median"`
	Worst  float64 `json:"worst"`
}

// CellSummary is one cell of a grid over its rounds: how many ran and
// saturated, and the spread of the confirmed rate and of the mean and p99
// latency over the runs that confirmed something.
type CellSummary struct {
	Connections int     `json:"connections"`
	Rate        float64 `json:"rate"`
	Runs        int     `json:"runs"`
	Saturated   int     `json:"saturated"`
	// ConfirmedPerS is higher-better; the latencies lower-better.
	ConfirmedPerS Spread `json:"confirmed_per_s"`
	MeanLatencyNs Spread `json:"mean_latency_ns"`
	P99LatencyNs  Spread `json:"p99_latency_ns"`
}

// CellVerdict is a cell's verdict between a target and the baseline, by
// the study's policy on the cells' mean latencies (a cell that saturated
// on either side withholds it).
type CellVerdict struct {
	Connections int           `json:"connections"`
	Rate        float64       `json:"rate"`
	Base        string        `json:"base"`
	Verdict     stats.Verdict `json:"verdict"`
	// Ratio is the target's best mean latency over the baseline's; 0
	// without a speed verdict.
	Ratio  float64 `json:"ratio,omitempty"`
	Reason string  `json:"reason"`
	// Estimate is the shift rule's, when it ran.
	Estimate *stats.Estimate `json:"estimate,omitempty"`
}

// Cell is one (connections, rate) run of a sweep.
type Cell struct {
	Connections int `json:"connections"`
	// Rate is per connection per second.
	Rate       float64 `json:"rate"`
	DurationNs int64   `json:"duration_ns"`
	// Expected is what the target processes if it keeps up: c·r·(T−1)
	// (load runs for T − 1 s; a batched cell's last batch never goes).
	// Sent is what tandem sent; Confirmed what the confirmer counted as
	// processed (duplicates removed).
	Expected  int64 `json:"expected"`
	Sent      int64 `json:"sent"`
	OK        int64 `json:"ok"`
	Confirmed int64 `json:"confirmed"`
	Saturated bool  `json:"saturated"`
	// LatencyNs is from send to confirmation: for cometbft, the time of
	// block H+1 minus the send time carried in a transaction of block H.
	LatencyNs         Distribution     `json:"latency_ns"`
	Duplicates        int64            `json:"duplicates"`
	NegativeLatencies int64            `json:"negative_latencies"`
	Errors            map[string]int64 `json:"errors"`
	// RunID tags the cell's transactions (the loadtime payload's id, as
	// a UUID), so CometBFT's own report tool tells the cells apart.
	RunID string `json:"run_id,omitempty"`
	// StartUnixNs and EndUnixNs bound the cell; ProcessedFirstUnixNs and
	// ProcessedLastUnixNs bound the blocks that held its transactions.
	StartUnixNs          int64 `json:"start_unix_ns"`
	EndUnixNs            int64 `json:"end_unix_ns"`
	ProcessedFirstUnixNs int64 `json:"processed_first_unix_ns,omitempty"`
	ProcessedLastUnixNs  int64 `json:"processed_last_unix_ns,omitempty"`
	// Blocks lists, for cometbft, each block that held the cell's
	// transactions: latency over time.
	Blocks []BlockPoint `json:"blocks,omitempty"`
	// Metrics holds figures derived from the target's scraped metrics
	// over the cell (blocks_per_min, txs_per_min, mempool_size_max, …)
	// and over the window its transactions were processed in
	// (processing_txs_per_min, …).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Search marks a cell run by the search; Repeat numbers its runs.
	// Round is the grid's round the cell ran in (a sweep with rounds).
	Search bool   `json:"search,omitempty"`
	Repeat int    `json:"repeat,omitempty"`
	Round  int    `json:"round,omitempty"`
	Error  string `json:"error,omitempty"`
	// Perturbations are the faults done to the target during the cell
	// (the sweep's perturbations, timed from the start of its load).
	Perturbations []Perturbation `json:"perturbations,omitempty"`
	// Dropped counts the arrivals the cell did not send, or whose answer
	// it did not wait for past its end: neither failures nor latencies.
	Dropped int64 `json:"dropped,omitempty"`
	// ThirdsP50Ns, with confirm: answer, is the median latency of the
	// successful answers to the arrivals of each third of the cell's
	// T − 1 s, by when they were intended (0: none); LatencyGrows says
	// they rose third by third beyond the rule's tolerance (a queue that
	// grows through the cell: saturated).
	ThirdsP50Ns  []int64 `json:"thirds_p50_ns,omitempty"`
	LatencyGrows bool    `json:"latency_grows,omitempty"`
	// ProcessedByNs, with confirm: answer, is how long from the start of
	// the cell's load its answers counted as processed: T − 1 s plus the
	// lowest of the thirds' 90th percentile latencies, at most a tenth of
	// the T − 1 s and 1 s.
	ProcessedByNs int64 `json:"processed_by_ns,omitempty"`
}

// ConfirmedPerSecond is the cell's confirmed count per second of load:
// over the T − 1 s that carry its batches (a batched cell's last batch
// never goes; an open cell schedules arrivals over the same span), the
// span Expected counts: a cell that confirms everything confirms c·r a
// second. It is 0 for a cell of at most one second.
func (c *Cell) ConfirmedPerSecond() float64 {
	secs := float64(c.DurationNs)/1e9 - 1
	if secs <= 0 {
		return 0
	}
	return float64(c.Confirmed) / secs
}

// BlockPoint is one block's share of a cell.
type BlockPoint struct {
	Height        int64 `json:"height"`
	TimeUnixNs    int64 `json:"time_unix_ns"`
	Txs           int64 `json:"txs"`
	MeanLatencyNs int64 `json:"mean_latency_ns"`
}

// SaturationPoint is where one connection count saturates: the highest
// rate whose cells kept up and the lowest with a cell that did not (0
// when none). HighestOK ≥ LowestSaturated means the grid is not
// monotonic (a lower rate saturated, a higher one kept up).
type SaturationPoint struct {
	Connections     int     `json:"connections"`
	HighestOK       float64 `json:"highest_ok_rate"`
	LowestSaturated float64 `json:"lowest_saturated_rate"`
	// ThroughputAtBest is confirmed per second at HighestOK, over the
	// T − 1 s that carry load (Cell.ConfirmedPerSecond; the mean when
	// that rate ran more than once).
	ThroughputAtBest float64 `json:"confirmed_per_s_at_highest_ok"`
}

// SearchResult is a bisection for the highest sustainable rate.
type SearchResult struct {
	Connections int     `json:"connections"`
	Sustained   float64 `json:"sustained_rate"`
	Saturated   float64 `json:"saturated_rate"`
	Probes      int     `json:"probes"`
	StopRule    string  `json:"stop_rule"`
}

// Finding is a diagnosis tandem made on its own, with its evidence.
type Finding struct {
	ID       string            `json:"id"`
	Target   string            `json:"target,omitempty"`
	Scenario string            `json:"scenario,omitempty"`
	Summary  string            `json:"summary"`
	Evidence map[string]string `json:"evidence,omitempty"`
}

// ErrVersion is returned (wrapped) for a results file of a major version
// this tandem does not read.
var ErrVersion = errors.New("unsupported results schema version")

//go:embed schema.json
var jsonSchema []byte

// Outcome is what the verdict policy needs to know of the round.
// The failures a perturbation caused while the target was down are its
// measure, not the target's fault: they are left out of the requests.
func (r Round) Outcome() stats.Round {
	requests := r.Requests
	for _, ev := range r.Perturbations {
		requests -= ev.ErrorsWhileDown
	}
	return stats.Round{Headline: r.Headline, Failed: r.Failed, Error: r.Error, Requests: requests, OK: r.OK, Errors: r.Errors,
		Dropped: r.Dropped, Unfinished: r.Unfinished, Offered: r.OfferedRate, Achieved: r.AchievedRate, GeneratorUse: r.GeneratorCPUUse}
}

// Engines are the load engines the scenario's rounds ran on, sorted.
func (sc *Scenario) Engines() []string {
	var out []string
	for _, rd := range sc.Rounds {
		if rd.Engine != "" && !slices.Contains(out, rd.Engine) {
			out = append(out, rd.Engine)
		}
	}
	slices.Sort(out)
	return out
}

// Fingerprint identifies what the scenario measured: its call, metric,
// direction, unit, load and the engines that ran it, the recording it
// replayed, if any, and whether it is a mix or a flow, or a part of one
// (which, at what weight). Two runs of a scenario with different fingerprints
// measured different things.
func (sc *Scenario) Fingerprint() string {
	parts := []any{sc.Call, sc.Metric, sc.Direction, sc.Unit, sc.Load, sc.Engines()}
	if sc.Replay != nil {
		parts = append(parts, sc.Replay)
	}
	if sc.Kind != "" || sc.Part != nil {
		parts = append(parts, sc.Kind, sc.Part)
	}
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Side is one target's rounds at one level (the concurrency of a closed
// loop, else 0), in round order, as the verdict policy sees them.
func (sc *Scenario) Side(target string, level int) stats.Side {
	var rs []stats.Round
	for _, rd := range sc.Rounds {
		if rd.Target == target && rd.Concurrency == level {
			rs = append(rs, rd.Outcome())
		}
	}
	return stats.NewSide(target, rs, sc.Direction == Higher)
}

// Degraded are a path's conditions during a degrade perturbation.
type Degraded struct {
	Up   LinkConditions `json:"up"`
	Down LinkConditions `json:"down"`
}

// SidesText names a split's sides: "[eu0 eu1] | [us0]".
func SidesText(sides [][]string) string {
	parts := make([]string, len(sides))
	for i, s := range sides {
		parts[i] = "[" + strings.Join(s, " ") + "]"
	}
	return strings.Join(parts, " | ")
}
