package worker

import (
	"context"
	"fmt"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/internal/fleet"
	"github.com/fuseraft/fr/internal/fleetapproval"
)

// checkApprovals checks the approval flags; set says one of the durations was given.
func checkApprovals(o *options, set bool) error {
	if set && !o.approvers {
		return cmdutil.Usagef("--approval-timeout and --approval-deadline are for --approvers")
	}
	if o.approvalTimeout <= 0 || o.approvalDeadline <= 0 {
		return cmdutil.Usagef("--approval-timeout and --approval-deadline must be positive")
	}
	if o.approvalTimeout > o.approvalDeadline {
		return cmdutil.Usagef("--approval-timeout (%s) is longer than --approval-deadline (%s)", o.approvalTimeout, o.approvalDeadline)
	}
	return nil
}

// natsApprovers is the approver of a worker with --approvers: the pool's fr-approve --nats,
// over NATS, each outcome recorded in the worker's own chain of the audit stream.
func natsApprovers(ctx context.Context, s cmdutil.Streams, cl *fleet.Client, o *options) (*fleetapproval.Client, error) {
	chain, err := fleetapproval.OpenChain(ctx, cl.JS, fleetapproval.DefaultAuditStream,
		fleetapproval.AuditSubject(o.pool, "worker-"+fleetapproval.Token(o.host)))
	if err != nil {
		return nil, cmdutil.Errorf(cmdutil.ExitUnavailable, "the audit stream %s: %v", fleetapproval.DefaultAuditStream, err)
	}
	a, err := fleetapproval.NewClient(cl.NC, o.pool,
		fleetapproval.WithTimeout(o.approvalTimeout), fleetapproval.WithDeadline(o.approvalDeadline),
		fleetapproval.WithAudit(chain), fleetapproval.WithLog(func(e fleetapproval.Event) {
			if e.What != fleetapproval.Won {
				cmdutil.Warnf(s.Err, prog, "%s", describe(e))
			}
		}))
	if err != nil {
		return nil, cmdutil.Errorf(cmdutil.ExitUnavailable, "approvals on %s: %v", o.conn, err)
	}
	return a, nil
}

// describe says what happened to an answer that did not win.
func describe(e fleetapproval.Event) string {
	return fmt.Sprintf("task %s: prompt %s: an answer %s (%s)", e.Task, e.Prompt, e.What, e.Reason)
}
