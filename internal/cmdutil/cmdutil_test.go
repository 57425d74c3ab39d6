package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/fuseraft/fr/pkg/wire"
)

func TestReport(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantErr  string
	}{
		{"success", nil, 0, ""},
		{"broken pipe is a quiet success", fmt.Errorf("writing: %w", syscall.EPIPE), 0, ""},
		{"plain error", errors.New("boom"), 1, "fr-x: error: boom\n"},
		{"usage", Usagef("unknown field %q", "nope"), 2, "fr-x: error: unknown field \"nope\"\n"},
		{"version", &wire.VersionError{Seen: 2, Supported: []int{1}, Where: "the ready event"}, 3,
			"fr-x: error: the ready event speaks protocolVersion 2; this build of fr supports 1\n"},
		{"protocol", &wire.ProtocolError{Msg: "expected a JSON envelope", Seen: "oops"}, 3, "fr-x: error: expected a JSON envelope: oops\n"},
		{"socket path", &wire.SocketPathError{Path: "/p", Max: 107}, 10, "fr-x: error: socket path /p is 2 bytes, longer than the 107 bytes AF_UNIX allows\n"},
		{"interrupted", context.Canceled, 130, "fr-x: error: context canceled\n"},
		{"with hints", WithHint(Errorf(ExitUnavailable, "no daemon"), "start one with 'fuseraft serve'", "or pass --socket"), 10,
			"fr-x: error: no daemon\nfr-x: hint: start one with 'fuseraft serve'\nfr-x: hint: or pass --socket\n"},
		{"hint on a plain error keeps its code", WithHint(&wire.ProtocolError{Msg: "bad"}, "h"), 3, "fr-x: error: bad\nfr-x: hint: h\n"},
		{"quiet exit", Exit(4), 4, ""},
		{"wrapped code", fmt.Errorf("ctx: %w", Errorf(ExitRefused, "401")), 4, "fr-x: error: ctx: 401\n"},
		{"escape sequences it quotes are shown, not sent", Usagef("bad line %s", "\x1b]0;PWNED\x07\x1b[2Jhi\u202e\x9b"), 2,
			"fr-x: error: bad line ␛]0;PWNED␇␛[2Jhi\uFFFD\uFFFD\n"},
		{"a multi-line message keeps its lines", Usagef("bad expression\n    .a | \x1b[2J\n         ^"), 2,
			"fr-x: error: bad expression\n    .a | ␛[2J\n         ^\n"},
		{"hints too", WithHint(errors.New("x"), "see \x1bP1$r\x1b\\"), 1, "fr-x: error: x\nfr-x: hint: see ␛P1$r␛\\\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			code := Report("fr-x", &buf, tt.err)
			if code != tt.wantCode || buf.String() != tt.wantErr {
				t.Errorf("Report = %d %q, want %d %q", code, buf.String(), tt.wantCode, tt.wantErr)
			}
		})
	}
	if (&Error{Code: 3}).Error() != "exit status 3" {
		t.Error("Error() without Err")
	}
}

func TestFindFuseraft(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fake-fuseraft")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	tests := []struct {
		flag    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{bin, nil, bin, ""},
		{"", map[string]string{"FUSERAFT_BIN": bin}, bin, ""},
		{"", map[string]string{"FUSERAFT_BIN": "fake-fuseraft"}, bin, ""},
		{"", nil, "", "fuseraft not found on PATH"},
		{"/nope/fuseraft", map[string]string{"FUSERAFT_BIN": bin}, "", "fuseraft not found (--fuseraft: /nope/fuseraft)"},
		{"", map[string]string{"FUSERAFT_BIN": "missing"}, "", "fuseraft not found (FUSERAFT_BIN: missing)"},
	}
	for _, tt := range tests {
		got, err := FindFuseraft(tt.flag, func(k string) string { return tt.env[k] })
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr || CodeOf(err) != ExitUnavailable {
				t.Errorf("FindFuseraft(%q, %v) error %v", tt.flag, tt.env, err)
			}
			var buf bytes.Buffer
			Report("fr-ls", &buf, err)
			if !strings.Contains(buf.String(), "fr-ls: hint: pass --fuseraft PATH or set FUSERAFT_BIN") {
				t.Errorf("hint missing: %q", buf.String())
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("FindFuseraft(%q, %v) = %q %v", tt.flag, tt.env, got, err)
		}
	}
}

func TestUseColor(t *testing.T) {
	tests := []struct {
		choice   string
		env      map[string]string
		terminal bool
		want     bool
	}{
		{"", nil, true, true},
		{"", nil, false, false},
		{"auto", map[string]string{"NO_COLOR": "1"}, true, false},
		{"", map[string]string{"TERM": "dumb"}, true, false},
		{"always", map[string]string{"NO_COLOR": "1"}, false, true},
		{"never", nil, true, false},
	}
	for _, tt := range tests {
		if got := UseColor(tt.choice, func(k string) string { return tt.env[k] }, tt.terminal); got != tt.want {
			t.Errorf("UseColor(%q, %v, %v) = %v", tt.choice, tt.env, tt.terminal, got)
		}
	}
}

func TestStreamsEnv(t *testing.T) {
	t.Setenv("FR_TEST_VAR", "os")
	if (Streams{}).Env("FR_TEST_VAR") != "os" {
		t.Error("nil Getenv must read the process environment")
	}
	s := Streams{Getenv: func(string) string { return "fake" }}
	if s.Env("FR_TEST_VAR") != "fake" {
		t.Error("Getenv ignored")
	}
	if o := OSStreams(); o.In != os.Stdin || o.Out != os.Stdout || o.Err != os.Stderr {
		t.Error("OSStreams")
	}
}

func TestColumns(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	w := 100
	for _, tc := range []struct {
		s    Streams
		want int
	}{
		{Streams{Getenv: env("")}, DefaultWidth},
		{Streams{Getenv: env("132")}, 132},
		{Streams{Getenv: env(" 90 ")}, 90},
		{Streams{Getenv: env("junk")}, DefaultWidth},
		{Streams{Getenv: env("-3")}, DefaultWidth},
		{Streams{Getenv: env("132"), Width: 60}, 60},
		// A terminal resized while the command runs: its width now, not at the start.
		{Streams{Getenv: env("132"), Width: 60, ReadWidth: func() int { return w }}, 100},
		// A width that cannot be read now is the last one known.
		{Streams{Getenv: env("132"), Width: 60, ReadWidth: func() int { return 0 }}, 60},
	} {
		if got := tc.s.Columns(); got != tc.want {
			t.Errorf("Columns() with Width %d, COLUMNS %q = %d, want %d", tc.s.Width, tc.s.Env("COLUMNS"), got, tc.want)
		}
	}
}

func TestPretty(t *testing.T) {
	for _, tc := range []struct {
		format   string
		terminal bool
		want     bool
	}{
		{"", false, false},
		{"", true, true},
		{"jsonl", true, false},
		{"pretty", false, true},
		{"pretty", true, true},
	} {
		if got := (Streams{OutTerminal: tc.terminal}).Pretty(tc.format); got != tc.want {
			t.Errorf("Pretty(%q) with stdout a terminal: %v = %v, want %v", tc.format, tc.terminal, got, tc.want)
		}
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(&bytes.Buffer{}) {
		t.Error("a file or a buffer is not a terminal")
	}
}

func TestNewAppUsageErrorsExit2(t *testing.T) {
	var out, errb bytes.Buffer
	s := Streams{In: strings.NewReader(""), Out: &out, Err: &errb}
	app := NewApp(s, "fr-x", "does x")
	app.Flags = []cli.Flag{&cli.StringFlag{Name: "format"}}
	app.Action = func(*cli.Context) error { return nil }
	code := RunApp(context.Background(), app, s, []string{"fr-x", "--nope"})
	if code != ExitUsage {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(errb.String(), "fr-x: error: unknown flag --nope") ||
		!strings.Contains(errb.String(), "fr-x: hint: see 'fr-x --help'") {
		t.Errorf("stderr %q", errb.String())
	}
	out.Reset()
	if code := RunApp(context.Background(), app, s, []string{"fr-x", "--version"}); code != 0 || !strings.Contains(out.String(), "fr-x version") {
		t.Errorf("--version: %d %q", code, out.String())
	}
}

func TestVersionString(t *testing.T) {
	old := Version
	defer func() { Version = old }()
	Version = "v9.9.9"
	if VersionString() != "v9.9.9" {
		t.Error("ldflags version ignored")
	}
	Version = ""
	if VersionString() == "" {
		t.Error("empty version")
	}
}

func TestFirstLine(t *testing.T) {
	if FirstLine("a\r\nb") != "a" || FirstLine("abc") != "abc" {
		t.Error("FirstLine")
	}
}

func TestWarnf(t *testing.T) {
	var buf bytes.Buffer
	Warnf(&buf, "fr-x", "skipped %d lines", 3)
	if buf.String() != "fr-x: warning: skipped 3 lines\n" {
		t.Errorf("%q", buf.String())
	}
	buf.Reset()
	Warnf(&buf, "fr-x", "skipped %q", "\x1b[2K\u200e")
	if buf.String() != "fr-x: warning: skipped \"\\x1b[2K\\u200e\"\n" {
		t.Errorf("%q", buf.String())
	}
	buf.Reset()
	Warnf(&buf, "fr-x", "skipped %s", "\x1b[2K\u200e\xff")
	if buf.String() != "fr-x: warning: skipped ␛[2K\uFFFD\uFFFD\n" {
		t.Errorf("%q", buf.String())
	}
}

func TestCheckTask(t *testing.T) {
	for _, tc := range []struct {
		task string
		ok   bool
	}{
		{"run the tests", true},
		{" x ", true},
		{"", false},
		{"   ", false},
		{"\t\n", false},
	} {
		err := CheckTask("--task", tc.task)
		if (err == nil) != tc.ok {
			t.Errorf("CheckTask(%q) = %v, want ok=%v", tc.task, err, tc.ok)
		}
		if err != nil && (CodeOf(err) != ExitUsage || err.Error() != "--task is empty") {
			t.Errorf("CheckTask(%q): code %d, %q", tc.task, CodeOf(err), err)
		}
	}
}

// Only a missing executable is "fuseraft not found" (10); the machine's errors are 1.
func TestStartFailed(t *testing.T) {
	for _, tt := range []struct {
		err  error
		code int
		want string
	}{
		{&os.PathError{Op: "fork/exec", Path: "/x/fuseraft", Err: syscall.ENOENT}, ExitUnavailable, "fuseraft not found"},
		{&exec.Error{Name: "fuseraft", Err: exec.ErrNotFound}, ExitUnavailable, "fuseraft not found"},
		{&os.SyscallError{Syscall: "pipe2", Err: syscall.EMFILE}, ExitFailed, "too many open files"},
		{&os.SyscallError{Syscall: "pipe2", Err: syscall.ENFILE}, ExitFailed, "starting fuseraft (/x/fuseraft)"},
		{&os.PathError{Op: "fork/exec", Path: "/x/fuseraft", Err: syscall.EACCES}, ExitFailed, "permission denied"},
		{&os.PathError{Op: "fork/exec", Path: "/x/fuseraft", Err: syscall.ENOMEM}, ExitFailed, "starting fuseraft"},
	} {
		e := StartFailed("/x/fuseraft", tt.err)
		if e.Code != tt.code || !strings.Contains(e.Error(), tt.want) {
			t.Errorf("StartFailed(%v) = %d %q, want %d and %q", tt.err, e.Code, e.Error(), tt.code, tt.want)
		}
	}
}

// The bearer token: the first line of --token-file, an empty file refused, else the
// environment.
func TestBearerToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := func(string) string { return " from-env \n" }
	for _, tc := range []struct {
		file, want, err string
	}{
		{"", "from-env", ""},
		{write("one", "  tok \n"), "tok", ""},
		{write("two", "\n first\nsecond\n"), "first", ""},
		{write("empty", " \n\n"), "", "is empty"},
		{filepath.Join(dir, "missing"), "", "cannot read --token-file"},
	} {
		got, err := BearerToken(tc.file, env)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, an error with %q", tc.file, got, err, tc.want, tc.err)
		}
		if err != nil && CodeOf(err) != ExitUsage {
			t.Errorf("BearerToken(%q): exit %d, want %d", tc.file, CodeOf(err), ExitUsage)
		}
	}
}

// The flags that name a daemon: one of --socket and --url, a ws:// or wss:// URL, --ca-cert
// for wss:// only.
func TestDaemonFrom(t *testing.T) {
	for _, tc := range []struct {
		socket, url, ca, err string
	}{
		{"/run/d.sock", "", "", ""},
		{"", "ws://127.0.0.1:1/attach", "", ""},
		{"", "", "", ""},
		{"/run/d.sock", "ws://h:1/attach", "", "cannot be combined"},
		{"", "http://h:1/attach", "", "is not a ws:// or wss:// URL"},
		{"", "ws:///attach", "", "is not a ws:// or wss:// URL"},
		{"", "ws://h:1/attach", "ca.pem", "--ca-cert is for wss://"},
		{"/run/d.sock", "", "ca.pem", "--ca-cert is for wss://"},
		{"", "wss://h:1/attach", filepath.Join(t.TempDir(), "missing.pem"), "missing.pem"},
	} {
		d, err := DaemonFrom(tc.socket, tc.url, tc.ca)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("DaemonFrom(%q, %q, %q): %v, want an error with %q", tc.socket, tc.url, tc.ca, err, tc.err)
			continue
		}
		if err == nil && (d.Socket != tc.socket || d.URL != tc.url) {
			t.Errorf("DaemonFrom(%q, %q): %+v", tc.socket, tc.url, d)
		}
	}
}
