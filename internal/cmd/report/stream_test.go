package report

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/fleetapproval"
	"github.com/fuseraft/fr/internal/testkit"
	"github.com/fuseraft/fr/internal/testkit/natstest"
)

// --audit nats://HOST:PORT/STREAM reports what the same chain reports from a file, and a
// chain on the stream that does not verify is refused.
func TestAuditFromStream(t *testing.T) {
	session, audit := record(t, ciPolicy, nil, "--scenario", "testdata/fail.yaml", "run", "--bridge", "-c", "ci.yaml", "ship it")
	srv := natstest.Start(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound(30*time.Second))
	defer cancel()
	if err := fleetapproval.EnsureStream(ctx, js, "AUDIT"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(readFile2(t, audit), "\n"), "\n")
	for _, l := range lines {
		if _, err := js.Publish(ctx, fleetapproval.AuditSubject("ci", "a1"), []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	fromFile, errs, code := report(t, session, nil, "--format", "json", "--audit", audit)
	if code != 0 {
		t.Fatalf("from the file: exit %d: %s", code, errs)
	}
	url := srv.URL() + "/AUDIT"
	fromStream, errs, code := report(t, session, nil, "--format", "json", "--audit", url)
	if code != 0 {
		t.Fatalf("from the stream: exit %d: %s", code, errs)
	}
	if got := strings.ReplaceAll(fromStream, url+"#fr.audit.ci.a1", audit); got != fromFile {
		t.Errorf("from the stream:\n%s\nfrom the file:\n%s", got, fromFile)
	}
	if !strings.Contains(fromFile, `"decider"`) {
		t.Fatalf("the report names no decider:\n%s", fromFile)
	}
	// a line changed on the way in breaks its chain
	tampered := strings.Replace(lines[0], `"decision":"deny"`, `"decision":"allow"`, 1)
	if tampered == lines[0] {
		tampered = strings.Replace(lines[0], `"decision":"allow"`, `"decision":"deny"`, 1)
	}
	if _, err := js.Publish(ctx, fleetapproval.AuditSubject("ci", "a2"), []byte(tampered)); err != nil {
		t.Fatal(err)
	}
	_, errs, code = report(t, session, nil, "--format", "json", "--audit", url)
	if code != 2 || !strings.Contains(errs, "fr.audit.ci.a2:1") || !strings.Contains(errs, "does not match its hash") {
		t.Errorf("a tampered chain: exit %d: %s", code, errs)
	}
}
