package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fuseraft/fr/internal/fleet"
)

// A fleet's audit stream (fr-approve --nats writes to it) is a JetStream stream that holds a
// chain per writer, each on a subject of its own, each line sealed as a log's is. It is read
// here as logs, one per subject, and each is verified as a file is.

// ChainLog is what the audit stream holds on one subject: one writer's lines, in order.
type ChainLog struct {
	Subject string
	Data    []byte // the lines, each ending in a line end
	Lines   int
}

// ReadStream reads every message the audit stream holds now, and returns them per subject,
// in the order each subject first appears.
func ReadStream(ctx context.Context, js jetstream.JetStream, stream string) ([]ChainLog, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	last := info.State.LastSeq
	var logs []ChainLog
	if info.State.Msgs == 0 {
		return logs, nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return nil, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	at := map[string]int{}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("audit stream %s: %w", stream, err)
	}
	defer it.Stop()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			it.Stop()
		case <-done:
		}
	}()
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("audit stream %s: %w", stream, ctx.Err())
			}
			return nil, fmt.Errorf("audit stream %s: %w", stream, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return nil, fmt.Errorf("audit stream %s: %w", stream, err)
		}
		i, ok := at[m.Subject()]
		if !ok {
			i = len(logs)
			at[m.Subject()] = i
			logs = append(logs, ChainLog{Subject: m.Subject()})
		}
		logs[i].Data = append(append(logs[i].Data, m.Data()...), '\n')
		logs[i].Lines++
		if md.Sequence.Stream >= last {
			return logs, nil
		}
	}
}

// ReadServerStream connects to the NATS server at server (nats://HOST:PORT) as name, with
// the credentials file creds (else $FR_NATS_CREDS) and the CA file ca, and reads its audit
// stream.
func ReadServerStream(ctx context.Context, server, stream, name, creds, ca string) ([]ChainLog, error) {
	nc, err := fleet.Connect(ctx, server, name, creds, ca)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return ReadStream(ctx, js, stream)
}

// VerifyStream's errors, beside a *ChainError: a stream with no line, a head no chain holds.
var (
	ErrNoLines      = errors.New("the stream holds no audit line")
	ErrHeadNotFound = errors.New("no chain has a line with the hash given with --head: lines were removed or rewritten since it was taken")
)

// VerifyStream checks every chain of an audit stream (logs, as ReadStream returns them), each
// as Verify checks a log, named NAME#SUBJECT, and returns a result per chain, File name and
// Subject set, up to the first chain that breaks (then a *ChainError). With head set, some
// chain must hold that line (its result then counts Since), else the error is ErrHeadNotFound.
func VerifyStream(name string, logs []ChainLog, head string) ([]VerifyResult, error) {
	if len(logs) == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrNoLines)
	}
	var out []VerifyResult
	found := head == ""
	for _, l := range logs {
		chain := name + "#" + l.Subject
		res, err := Verify(chain, bytes.NewReader(l.Data), "")
		if err != nil {
			return out, err
		}
		res.File, res.Subject = name, l.Subject
		if !found {
			if hres, err := Verify(chain, bytes.NewReader(l.Data), head); err == nil {
				found, res.Since = true, hres.Since
			}
		}
		out = append(out, res)
	}
	if !found {
		return out, fmt.Errorf("%s: %w", name, ErrHeadNotFound)
	}
	return out, nil
}
