// Package testkit is what fr's tests share: time, so that none depends on the speed of the
// machine (a wait lasts until the event it waits for, and only a hang reaches its bound); the
// setup and commands of testscript scripts (RunScripts, ScriptCmds); a synchronised buffer
// (SyncBuffer); a made-up environment (Env). Its subpackages give a command a terminal of a
// chosen width or none (tty), run one on a real pseudo-terminal (screentest), compare with
// golden files (golden), and run a real NATS server (natstest).
//
// Every bound a test gives is scaled by FR_TEST_TIMEOUT_SCALE (a number, default 1; values
// under 1 count as 1), for machines slower than a busy 2-core one: under emulation, or with
// a debugger attached, FR_TEST_TIMEOUT_SCALE=5 makes every bound five times longer. The
// bounds themselves are written for a machine whose cores are all busy with other work: tens
// of seconds for what takes milliseconds on a quiet one.
package testkit

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
)

// ScaleEnv is the environment variable that scales every bound.
const ScaleEnv = "FR_TEST_TIMEOUT_SCALE"

// Hang is the bound of a wait for something that takes milliseconds on a quiet machine: what
// a test waits for longer than this (scaled) is taken for a hang.
const Hang = 30 * time.Second

var (
	scaleOnce sync.Once
	scale     float64
)

// Scale is FR_TEST_TIMEOUT_SCALE, at least 1.
func Scale() float64 {
	scaleOnce.Do(func() {
		scale = 1
		if v := os.Getenv(ScaleEnv); v != "" {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f > 1 {
				scale = f
			}
		}
	})
	return scale
}

// Bound is d scaled by FR_TEST_TIMEOUT_SCALE: how long to wait before calling a hang a hang.
func Bound(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Scale())
}

// After is time.After(Bound(d)), for the timeout case of a select that waits on an event.
func After(d time.Duration) <-chan time.Time {
	return time.After(Bound(d))
}

// Context is a context that ends after Bound(d), and with the test.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Bound(d))
	t.Cleanup(cancel)
	return ctx
}

// poll is how often Until looks again. It is short: a look is cheap, and a test that waits
// for a condition should not take much longer than the condition.
const poll = 5 * time.Millisecond

// Until waits until cond holds, looking every few milliseconds, and reports whether it did
// within Bound(d). It is for conditions no event announces: a file that grows, a process
// that ends, a counter.
func Until(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(Bound(d))
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(poll)
	}
}

// WaitUntil is Until that fails the test, saying what did not happen, when cond does not hold
// within Bound(d).
func WaitUntil(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(d, cond) {
		t.Fatalf("%s: not within %s", what, Bound(d))
	}
}

// WaitFile waits until the file at path matches re (or, with neg, stops matching it) within
// Bound(d), and returns what it last read; err says it did not. A file not there yet is empty.
func WaitFile(path string, re *regexp.Regexp, neg bool, d time.Duration) ([]byte, error) {
	var b []byte
	if Until(d, func() bool {
		b, _ = os.ReadFile(path)
		return re.Match(b) != neg
	}) {
		return b, nil
	}
	verb := "did not match"
	if neg {
		verb = "still matched"
	}
	return b, fmt.Errorf("%s %s %q within %s", path, verb, re, Bound(d))
}

// LongEnv is the environment variable `make chaos` sets to "full" for the long runs.
const LongEnv = "FR_CHAOS"

// Long reports whether the long runs are asked for (FR_CHAOS=full, as `make chaos` sets): the
// fault, soak and randomised tests then run at full size (hundreds of MB, thousands of
// cases, minutes). `make test` runs each of them small, checking the same things.
func Long() bool { return os.Getenv(LongEnv) == "full" }

// Env is an environment of the given KEY, VALUE pairs, for Streams.Getenv: nothing else of
// the machine's environment is seen.
func Env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}
