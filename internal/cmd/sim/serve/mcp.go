package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// The daemon's MCP tools, as fuseraft serve exposes them at /mcp of its HTTP port (see
// ../../../../shared/spec/fuseraft-behaviour.md, "The daemon's MCP tools"): dispatch_task
// queues a task nobody attends, get_status and get_result report on any task by its id.

// doneTask is what the daemon remembers of a finished task for get_status and get_result.
// It survives restarts (doneFile in the state directory).
type doneTask struct {
	wire.TaskResult
	TurnCount int `json:"turnCount"`
}

const doneFile = "serve-done.json"

// maxDone bounds the finished tasks remembered; the oldest are forgotten first.
const maxDone = 10000

func loadDone(dir string) ([]doneTask, error) {
	b, err := os.ReadFile(filepath.Join(dir, doneFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var done []doneTask
	if err := json.Unmarshal(b, &done); err != nil {
		return nil, errors.New("the saved state " + filepath.Join(dir, doneFile) + " is not valid: " + err.Error())
	}
	return done, nil
}

// remember keeps a finished task for the MCP tools. Called with d.mu held.
func (d *daemon) remember(t *task, res []byte) {
	var r wire.TaskResult
	json.Unmarshal(res, &r)
	r.SessionID, r.Task = t.sessionID, t.text
	d.done = append(d.done, doneTask{TaskResult: r, TurnCount: t.step + 1})
	if n := len(d.done) - maxDone; n > 0 {
		d.done = append(d.done[:0], d.done[n:]...)
	}
	b, _ := json.Marshal(d.done)
	if err := writeFileAtomic(filepath.Join(d.stateDir, doneFile), append(b, '\n')); err != nil {
		d.warn("cannot save the finished tasks: %v", err)
	}
}

type dispatchArgs struct {
	Task        string `json:"task" jsonschema:"the task, as a user_input's text"`
	ObjectiveID string `json:"objectiveId,omitempty" jsonschema:"the objective the task belongs to"`
}

type sessionArgs struct {
	SessionID string `json:"sessionId" jsonschema:"the task's session id, as dispatch_task returned it"`
}

// jsonText is a tool result whose one content is the JSON object b, as fuseraft answers.
func jsonText(b []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

func unknownTask(id string) *mcp.CallToolResult {
	return jsonText(encodeObject(field{"status", "unknown"}, field{"error", fmt.Sprintf("No task found for session '%s'.", id)}))
}

// mcpServer is the daemon's MCP server with its three tools.
func (d *daemon) mcpServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fr-sim serve", Version: cmdutil.VersionString()}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "dispatch_task", Description: "Queue a task for the daemon's agents; nobody attends it: its approvals follow the unattended policy."},
		func(_ context.Context, _ *mcp.CallToolRequest, in dispatchArgs) (*mcp.CallToolResult, any, error) {
			if strings.TrimSpace(in.Task) == "" {
				return nil, nil, errors.New("task is empty")
			}
			if !d.enter() {
				return nil, nil, errors.New("the daemon is stopping")
			}
			defer d.wg.Done()
			d.mu.Lock()
			defer d.mu.Unlock()
			t := d.dispatchOwnerless(in.Task)
			return jsonText(encodeObject(field{"sessionId", t.sessionID}, field{"status", "queued"}, field{"position", d.position(t)})), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "get_status", Description: "Where a task is: queued, running, completed or failed."},
		func(_ context.Context, _ *mcp.CallToolRequest, in sessionArgs) (*mcp.CallToolResult, any, error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			if t := d.live(in.SessionID); t != nil {
				var none *string
				return jsonText(encodeObject(field{"status", t.status}, field{"position", d.position(t)},
					field{"turnCount", t.step}, field{"lastAgent", none}, field{"lastMessage", none})), nil, nil
			}
			if dt := d.finished(in.SessionID); dt != nil {
				var none *int
				return jsonText(encodeObject(field{"status", dt.status()}, field{"position", none},
					field{"turnCount", dt.TurnCount}, field{"lastAgent", dt.LastAgent}, field{"lastMessage", dt.LastMessage})), nil, nil
			}
			return unknownTask(in.SessionID), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "get_result", Description: "A finished task's outcome and messages; only its status while it is queued or running."},
		func(_ context.Context, _ *mcp.CallToolRequest, in sessionArgs) (*mcp.CallToolResult, any, error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			if t := d.live(in.SessionID); t != nil {
				return jsonText(encodeObject(field{"status", t.status})), nil, nil
			}
			if dt := d.finished(in.SessionID); dt != nil {
				agent := "coder"
				if dt.LastAgent != nil {
					agent = *dt.LastAgent
				}
				msgs := []map[string]string{{"agent": "Human", "role": "user", "content": dt.Task}}
				if dt.LastMessage != nil {
					msgs = append(msgs, map[string]string{"agent": agent, "role": "assistant", "content": *dt.LastMessage})
				}
				return jsonText(encodeObject(field{"status", dt.status()}, field{"succeeded", dt.Succeeded},
					field{"errorMessage", dt.ErrorMessage}, field{"messages", msgs})), nil, nil
			}
			return unknownTask(in.SessionID), nil, nil
		})
	return s
}

func (dt *doneTask) status() string {
	if dt.Succeeded {
		return "completed"
	}
	return "failed"
}

// live finds a queued or running task. Called with d.mu held.
func (d *daemon) live(id string) *task {
	if d.running != nil && d.running.sessionID == id {
		return d.running
	}
	for _, t := range d.queue {
		if t.sessionID == id {
			return t
		}
	}
	return nil
}

// finished finds a finished task, the latest if one id finished twice. Called with d.mu held.
func (d *daemon) finished(id string) *doneTask {
	for i := len(d.done) - 1; i >= 0; i-- {
		if d.done[i].SessionID == id {
			return &d.done[i]
		}
	}
	return nil
}

// mcpHandler serves the MCP tools over streamable HTTP, behind the same bearer tokens as
// /attach: a read-only token may look tasks up but not dispatch them.
func (d *daemon) mcpHandler(toks tokens) http.Handler {
	srv := d.mcpServer()
	ro := d.mcpServer()
	// a read-only token's server has no dispatch_task
	ro.RemoveTools("dispatch_task")
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if readOnly, _ := r.Context().Value(readOnlyKey{}).(bool); readOnly {
			return ro
		}
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, readOnly, ok := toks.admit(w, r, "a request")
		if !ok {
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), readOnlyKey{}, readOnly)))
	})
}

type readOnlyKey struct{}

// unattended is the unattended policy's answer to a prompt of a task nobody attends: nil (a
// denial, a question skipped), or with --unattended-policy allow an approval, for the
// daemon's own tasks (dispatch_task, objectives, A2A calls) only.
func (d *daemon) unattended(c *client, req []byte) []byte {
	if !d.opts.unattendedAllow || !c.ownerless {
		return nil
	}
	if t, _ := wire.TopLevelString(req, "type"); t != wire.TypeApproval {
		return nil
	}
	return wire.ApprovalResponse(true)
}
