package approve

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/testkit"
)

func runApprove(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	s := cmdutil.Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code = Run(context.Background(), s, append([]string{"fr-approve"}, args...))
	return code, out.String(), errb.String()
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: ls, decision: allow, shell: {commands: [ls], paths: inside_root}}\ntests:\n  - {command: ls, expect: allow}\n")
	failing := writeFile(t, dir, "f.yaml", "version: 1\ntests:\n  - {command: ls, expect: allow}\n")
	broad := writeFile(t, dir, "b.yaml", "version: 1\nrules:\n  - {name: all, decision: allow, shell: ['*']}\n")
	bad := writeFile(t, dir, "bad.yaml", "version: 1\nrulez: []\n")
	broken := writeFile(t, dir, "audit.log", "{\"prev\":null}\n{\"prev\":\"sha256:00\"}\n")
	const allowed = `{"type":"approval_request","kind":"shell_command","command":"ls"}` + "\n"
	const denied = `{"type":"approval_request","kind":"shell_command","command":"rm x"}` + "\n"
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		want  int
	}{
		{"allowed", allowed, []string{"--policy", pol}, 0},
		{"denied", denied, []string{"--policy", pol}, 0},
		{"denied, asked to fail", allowed + denied, []string{"--policy", pol, "--fail-on-deny"}, 1},
		{"no policy", allowed, nil, 2},
		{"invalid policy", allowed, []string{"--policy", bad}, 2},
		{"unreadable policy", allowed, []string{"--policy", filepath.Join(dir, "none.yaml")}, 2},
		{"bad flag", "", []string{"--policy", pol, "--nope"}, 2},
		{"bad duration", "", []string{"--policy", pol, "--ask-timeout", "soon"}, 2},
		{"unsupported version", `{"type":"ready","protocolVersion":9}` + "\n", []string{"--policy", pol}, 3},
		{"any version", `{"type":"ready","protocolVersion":9}` + "\n", []string{"--policy", pol, "--any-version"}, 0},
		{"check", allowed + denied, []string{"check", "--policy", pol}, 0},
		{"check fail-on-deny", allowed + denied, []string{"check", "--policy", pol, "--fail-on-deny"}, 1},
		{"test ok", "", []string{"test", "--policy", pol}, 0},
		{"test mismatch", "", []string{"test", "--policy", failing}, 1},
		{"test invalid", "", []string{"test", "--policy", bad}, 2},
		{"lint clean", "", []string{"lint", "--policy", pol}, 0},
		{"lint findings", "", []string{"lint", "--policy", broad}, 1},
		{"lint invalid", "", []string{"lint", "--policy", bad}, 2},
		{"verify broken", "", []string{"verify-audit", broken}, 1},
		{"verify missing", "", []string{"verify-audit", filepath.Join(dir, "none.log")}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runApprove(t, c.stdin, c.args...)
			if code != c.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.want, stderr)
			}
		})
	}
}

func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\n")
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, cmdutil.Streams{In: inR, Out: io.Discard, Err: io.Discard}, []string{"fr-approve", "--policy", pol})
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != cmdutil.ExitInterrupted {
			t.Fatalf("exit %d, want 130", code)
		}
	case <-testkit.After(10 * time.Second):
		t.Fatal("fr-approve did not stop when interrupted")
	}
}

// Each response is flushed as soon as it is decided, while the input stays open.
func TestResponsesAreLive(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: ls, decision: allow, shell: {commands: [ls], paths: inside_root}}\n")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), cmdutil.Streams{In: inR, Out: outW, Err: io.Discard}, []string{"fr-approve", "--policy", pol})
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	for i, want := range []string{`{"type":"approval_response","approved":true}`, `{"type":"approval_response","approved":false}`} {
		cmd := "ls"
		if i == 1 {
			cmd = "rm -rf /"
		}
		io.WriteString(inW, `{"type":"token","text":"x"}`+"\n"+`{"type":"approval_request","kind":"shell_command","command":"`+cmd+`"}`+"\n")
		line := readLine(t, br)
		if line != want {
			t.Fatalf("response %d: %s, want %s", i, line, want)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
}

func readLine(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	c := make(chan string, 1)
	go func() {
		l, _ := br.ReadString('\n')
		c <- strings.TrimSpace(l)
	}()
	select {
	case l := <-c:
		return l
	case <-testkit.After(10 * time.Second):
		t.Fatal("no response within 10s")
	}
	return ""
}

// A FIFO works for --input and for --output; the output FIFO's reader may come after
// fr-approve starts (the e2e tests cover a reader that comes first).
func TestFIFOs(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.yaml", "version: 1\nrules:\n  - {name: ls, decision: allow, shell: {commands: [ls], paths: inside_root}}\n")
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	for _, f := range []string{in, out} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), cmdutil.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard},
			[]string{"fr-approve", "--policy", pol, "--input", in, "--output", out})
	}()
	opened := make(chan *os.File, 2)
	go func() {
		w, err := os.OpenFile(in, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			opened <- nil
			return
		}
		opened <- w
	}()
	var w *os.File
	select {
	case w = <-opened:
	case <-testkit.After(10 * time.Second):
		t.Fatal("fr-approve did not open its input FIFO")
	}
	if w == nil {
		return
	}
	io.WriteString(w, `{"type":"approval_request","kind":"shell_command","command":"ls"}`+"\n")
	go func() {
		r, err := os.Open(out)
		if err != nil {
			t.Error(err)
			opened <- nil
			return
		}
		opened <- r
	}()
	var r *os.File
	select {
	case r = <-opened:
	case <-testkit.After(10 * time.Second):
		t.Fatal("fr-approve did not open its output FIFO")
	}
	if r == nil {
		return
	}
	defer r.Close()
	if got := readLine(t, bufio.NewReader(r)); got != `{"type":"approval_response","approved":true}` {
		t.Fatalf("got %s", got)
	}
	w.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
	case <-testkit.After(10 * time.Second):
		t.Fatal("fr-approve did not end when its input FIFO closed")
	}
}

func TestReorderArgs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"fr-approve --policy p.yaml", "fr-approve --policy p.yaml"},
		{"fr-approve check run.jsonl --policy p.yaml", "fr-approve check --policy p.yaml run.jsonl"},
		{"fr-approve check a b --format=table -p p.yaml", "fr-approve check --format=table -p p.yaml a b"},
		{"fr-approve --root /r check a --fail-on-deny", "fr-approve check --root /r --fail-on-deny a"},
		{"fr-approve check a -- --policy", "fr-approve check -- a --policy"},
		{"fr-approve verify-audit audit.log --head H", "fr-approve verify-audit --head H audit.log"},
		{"fr-approve test x.yaml -v", "fr-approve test -v x.yaml"},
		{"fr-approve check - --policy p", "fr-approve check --policy p -"},
		{"fr-approve --policy check", "fr-approve --policy check"},
	} {
		got := strings.Join(cmdutil.Intersperse(App(cmdutil.Streams{}), strings.Fields(c.in)), " ")
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestCheckRowShape(t *testing.T) {
	want := []string{"File", "Line", "Type", "Kind", "Summary", "Decision", "Answer", "Decider", "Rule", "Part", "Reason"}
	var got []string
	rt := reflect.TypeOf(CheckRow{})
	for i := 0; i < rt.NumField(); i++ {
		got = append(got, rt.Field(i).Name)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CheckRow fields %v", got)
	}
}

// The example policies' own tests pass.
func TestExamplePolicies(t *testing.T) {
	files, err := filepath.Glob("../../../examples/*.yaml")
	files = append(files, "../../../demo/policy.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			code, stdout, stderr := runApprove(t, "", "test", "--policy", f)
			if code != 0 || !strings.HasPrefix(stdout, "ok ") {
				t.Errorf("exit %d\n%s%s", code, stdout, stderr)
			}
			code, stdout, stderr = runApprove(t, "", "lint", "--policy", f)
			if code != 0 {
				t.Errorf("lint: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}
