package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Environment variables fr-sim reads. fr-sim's global flags are passed on to every mode (serve
// and the queries included) by setting these in the environment the mode sees, so a mode only
// ever needs FromEnv.
const (
	EnvScenario = "FRSIM_SCENARIO" // scenario file; empty for the embedded default
	EnvRecord   = "FRSIM_RECORD"   // file to append every client input line to (JSONL)
	EnvFaults   = "FRSIM_FAULTS"   // fault list, see ParseFaults
	EnvPace     = "FRSIM_PACE"     // delay multiplier; 0 plays without delays
)

// FromEnv loads the scenario named by $FRSIM_SCENARIO (else the embedded default) and merges
// the faults of $FRSIM_FAULTS over the scenario's own.
func FromEnv(getenv func(string) string) (*Scenario, error) {
	var s *Scenario
	if p := getenv(EnvScenario); p != "" {
		var err error
		if s, err = Load(p); err != nil {
			return nil, err
		}
	} else {
		s = Default()
	}
	f, err := ParseFaults(getenv(EnvFaults))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvFaults, err)
	}
	s.Faults = s.Faults.Merge(f)
	return s, nil
}

// Pace reads $FRSIM_PACE: noDelays for 0, else the multiplier (1 when unset or invalid).
func Pace(getenv func(string) string) (pace float64, noDelays bool, err error) {
	v := strings.TrimSpace(getenv(EnvPace))
	if v == "" {
		return 1, false, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 1, false, fmt.Errorf("%s=%q: want a number >= 0 (0 plays without delays)", EnvPace, v)
	}
	return f, f == 0, nil
}

// ParseFaults reads a comma-separated fault list, as $FRSIM_FAULTS and --faults take it:
//
//	dotnet               JSON as .NET writes it
//	crlf                 \r\n line ends
//	noise[=N]            plain-text lines before the first event and every N lines (4)
//	split[=BYTES[/PAUSE]] lines written in pieces of BYTES (7) with PAUSE between (5ms)
//	version=N            announce protocolVersion N
//	unknown-kind[=NAME]  every approval_request gets kind NAME (sim_unknown_kind)
//	big[=BYTES]          tool_result outputs and file_write contents of BYTES (50000000)
//	crash[=N]            die after N events (10), exit 134, half a line left on stdout
//	flood=N              N token events at the start of every turn, run or task
func ParseFaults(spec string) (Faults, error) {
	var f Faults
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, val, hasVal := strings.Cut(item, "=")
		num := func(def int) (int, error) {
			if !hasVal {
				return def, nil
			}
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("fault %s: %q is not a whole number", name, val)
			}
			return n, nil
		}
		var err error
		switch name {
		case "dotnet":
			f.DotNet = true
		case "crlf":
			f.CRLF = true
		case "noise":
			f.Noise = DefaultNoise
			f.NoiseEvery, err = num(4)
		case "split":
			sp := &Split{Bytes: 7, Pause: Duration(5 * time.Millisecond)}
			if hasVal {
				b, p, hasPause := strings.Cut(val, "/")
				if sp.Bytes, err = strconv.Atoi(b); err != nil || sp.Bytes < 1 {
					return f, fmt.Errorf("fault split: %q is not a byte count", b)
				}
				if hasPause {
					d, perr := time.ParseDuration(p)
					if perr != nil || d < 0 {
						return f, fmt.Errorf("fault split: bad pause %q", p)
					}
					sp.Pause = Duration(d)
				}
			}
			f.Split = sp
		case "version":
			f.ProtocolVersion, err = num(2)
		case "unknown-kind":
			f.UnknownKind = "sim_unknown_kind"
			if hasVal && val != "" {
				f.UnknownKind = val
			}
		case "big":
			f.Big, err = num(50_000_000)
		case "crash":
			f.CrashAfter, err = num(10)
			if f.CrashAfter == 0 {
				f.CrashAfter = 1
			}
		case "flood":
			f.Flood, err = num(100_000)
		default:
			return f, fmt.Errorf("unknown fault %q (known: dotnet, crlf, noise, split, version, unknown-kind, big, crash, flood)", name)
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// Recorder appends every line clients send to a JSONL file, one object a line:
// {"t":"<RFC 3339 time>","mode":"repl","line":<the line, when it is JSON>} or, for a line
// that is not JSON, {"t":...,"mode":...,"text":"<the line>"}; a SIGINT the client sent is
// {"t":...,"mode":...,"signal":"SIGINT"}. Tests read it to check that no stray line ever
// reached fr-sim, and what interrupted it. A nil *Recorder records nothing.
type Recorder struct {
	mu sync.Mutex
	f  *os.File
}

// OpenRecorder opens path for appending; an empty path gives a nil Recorder.
func OpenRecorder(path string) (*Recorder, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &Recorder{f: f}, nil
}

// Record appends one input line.
func (r *Recorder) Record(mode string, line []byte) {
	if r == nil {
		return
	}
	rec := NewObject("t", time.Now().UTC().Format(time.RFC3339Nano), "mode", mode)
	if json.Valid(line) {
		rec.Set("line", json.RawMessage(compact(line)))
	} else {
		rec.Set("text", string(line))
	}
	b := append(rec.Bytes(), '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.f.Write(b)
}

// RecordSignal appends a signal received (by its name, "SIGINT").
func (r *Recorder) RecordSignal(mode, name string) {
	if r == nil {
		return
	}
	b := append(NewObject("t", time.Now().UTC().Format(time.RFC3339Nano), "mode", mode, "signal", name).Bytes(), '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.f.Write(b)
}

// Close closes the file.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	return r.f.Close()
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}
