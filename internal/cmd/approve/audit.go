package approve

import (
	"errors"
	"os"

	"github.com/fuseraft/fr/internal/audit"
	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// wrapAuditFile lets tests put a failing file (a full disk) under the audit log.
var wrapAuditFile = func(f *os.File) audit.File { return f }

// logged sends resp, the answer to one prompt, once rec is written whole to the audit log
// (when there is one): a decision is never sent without its line. When the line cannot be
// written, the prompt gets refusal instead (a denial; for a question, no answer), unlogged,
// the answers before it (all logged) are sent, and the error ends fr-approve with exit 1.
// Every prompt so gets exactly one answer, and an answer the log does not hold is never
// anything but a refusal.
func (srv *server) logged(rec audit.Record, resp, refusal []byte) error {
	if srv.audit == nil {
		return srv.respond(resp)
	}
	err := srv.audit.Append(rec)
	if err == nil {
		return srv.respond(resp)
	}
	if rerr := srv.respond(refusal); rerr == nil {
		srv.flush()
	}
	what := "denied"
	if rec.Type == wire.TypeQuestion {
		what = "answered null"
	}
	var e *audit.AppendError
	if errors.As(err, &e) && e.Torn != nil {
		return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "%v: the prompt was %s, unrecorded (%s); fr-approve stops", err, what, rec.Summary),
			audit.RepairHint(srv.audit.Name())+", once the disk takes writes again")
	}
	return cmdutil.WithHint(cmdutil.Errorf(cmdutil.ExitFailed, "%v: the prompt was %s, unrecorded (%s); fr-approve stops", err, what, rec.Summary),
		"the log was cut back to its last whole line and still verifies: free space, then start fr-approve again on it")
}
