package approve

const description = `fr-approve reads fuseraft events (stdin, or --input) and writes exactly one approval_response for
each approval_request and one question_response for each question, in order (stdout, or
--output). Responses are sent whenever the input has no whole line left to decide, and before a
person is asked anything: on a live stream, where the next prompt waits for its answer, each goes
the moment it is decided; a recorded stream is answered in blocks, at full speed. Every other
event, and every line that is not JSON, is ignored. The protocolVersion of ready and hello
events is checked.

A policy decides each prompt: allow, deny, or ask a person. Asking happens on the terminal
(/dev/tty, or --tty), never on stdin or stdout: a one-line summary (file writes as a unified diff,
coloured unless NO_COLOR), then "allow? [y/N]". y or yes allows; anything else denies. With no
terminal, or no answer within --ask-timeout, the prompt is denied and recorded as no-tty or
timeout, never as a person's answer.

POLICY FORMAT
  version: 1                 # required
  default: deny              # deny (the default) or ask: for prompts no rule matches
  question_default: skip     # skip (answer null) or ask: for questions no rule answers
  rules:                     # named rules; when several match, the strictest wins:
                             # deny, then ask, then allow (file order breaks ties)
    - name: go-tools
      decision: allow        # allow, ask or deny
      shell: ["go build", "go test", "go vet", "gofmt -l"]
    - name: no-force-push
      decision: deny
      shell: ["git push ** --force", "git push ** -f"]
    - name: sources
      decision: allow
      file: {paths: ["**/*.go", "go.mod", "go.sum"], max_size: 100KB, max_changed_lines: 200}
    - name: private-keys
      decision: deny
      kind: file_write
      when: '.newContent | test("PRIVATE KEY")'
    - name: docs-fetch
      decision: allow
      tool: {plugin: web, action: fetch, detail: '/^https://pkg\.go\.dev//'}
    - name: planner-to-coder
      decision: allow
      route: {source: planner, target: coder}
      limit: {max: 20, per: session}     # or per: 1h
  questions:                 # the first rule that applies answers
    - {name: proceed, question: "*continue*", option: "Yes*"}
    - {name: name-it, question: "/branch name/", text: "fr-ci"}
    - {name: rest, skip: true}
  tests:                     # run by 'fr-approve test'
    - {command: "go test ./... && rm -rf /", expect: deny}
    - {event: {type: approval_request, kind: file_write, path: a.go, newContent: x}, expect: allow, rule: sources}

Unknown keys, bad globs, bad regular expressions and bad jq stop fr-approve before it reads any
input (exit 2), naming the file, the line and what is wrong.

shell (kind shell_command): argv patterns. A command is parsed as bash parses it, and every
simple command in it is judged on its own: pipelines, lists, subshells, $(...) and backticks,
<(...), function bodies, the command strings of bash -c, sh -c, eval, watch, trap and alias,
and what a shell reads from a here-document. The wrappers env, command, builtin, exec, nohup,
nice, time, timeout, setsid, stdbuf, busybox, xargs and find -exec are seen through. sudo,
doas, pkexec, su -c and ssh are not: "sudo X" must be allowed as written, and X is still
judged by deny and ask rules. /bin/rm and \rm are rm; ./rm is not rm for an allow rule (it is for
deny and ask). The strictest part decides the whole; a part no rule matches gets the default.
A pattern's words are globs (* ? [..]) or /regex/, matched one to one; ** stands for any
number of words; the pattern is a prefix ("git push" matches "git push origin main") unless it
ends with $. An allow rule never matches a command that writes to a file through a redirection
(> f, time -o f; /dev/null is fine), has a word only known at run time ($VAR, $(cmd), a glob,
xargs input), sets a variable other than a few harmless ones (GOOS, GOARCH, CGO_ENABLED,
GOMAXPROCS, LANG, LC_*, TZ, TERM, NO_COLOR, CI, ...: HOME, GOPROXY, GIT_DIR and the like
change what runs), or does not parse, unless the rule says so with allow_redirects,
allow_expansions, allow_env or allow_unparsable: true (shell: {commands: [...],
allow_redirects: true}). Deny and ask rules see such words as matching anything. Arithmetic
((( )), let, $(( )), [[ -eq ]], a[i] subscripts, test -v 'a[i]') is never allowed: bash
evaluates a variable's value there as an expression, and a[$(cmd)] in it runs cmd.

file (kind file_write): doublestar globs (**) over the path relative to --root, after
resolving .. and symlinks; /absolute globs match absolute paths. A path outside the root is
never allowed. An allow rule's max_size (bytes, KB, MiB...) and max_changed_lines bound what it
allows; a deny or ask rule with bounds matches writes beyond them.

tool (kind tool_action): plugin, action, detail. route (kind route_approval): source,
target, keyword. Each is a glob or /regex/, or a list of them; a field left out matches all.

kind: names the approval kind; a rule with no kind and no matcher applies to every known
kind. An approval kind this build does not know is never allowed by such a wildcard: only a
rule naming it (kind: browser_action) can allow it. A malformed prompt is always denied.
Malformed includes a prompt nested deeper than a JSON decoder follows or cut short (a line
whose top level says "type":"approval_request" is answered even when it is not valid JSON), text
that is not UTF-8 (raw bytes, or an escaped lone surrogate such as \ud800), and a deciding field
given twice with different values or under a key in another case ("command" and "Command"):
readers could take such a prompt two ways. An undecodable question is skipped.

when: a jq expression (gojq) over the whole event; the rule matches only when it yields a
value other than false or null. A run-time error is a warning and no match.

limit: {max: N, per: session | DURATION} on an allow rule: after N allows (per fuseraft
session, or within the sliding window) the rule no longer matches and the other rules or the
default decide. With --audit the counts survive a restart: they are rebuilt from the log.

AUDIT LOG
--audit FILE appends one JSON line per decision: time, session, type, kind, summary, decision,
answer (questions), decider (rule, person, timeout, no-tty, default, malformed), rule, part,
reason, charged (limited rules), policy (sha256 of the policy file), latencyMs, prev (the hash
of the previous line, null on the first) and hash (the sha256 of the line without this field).
'fr-approve verify-audit FILE' checks the chain and prints the last hash; keep it where the
log's writer cannot change it and pass it as --head later to notice lines cut from the end. At
start-up fr-approve checks the chain too, and refuses a broken log (exit 2) rather than rebuild
its limits from it.

EXIT STATUS
  0    the input ended; every prompt was answered
  1    --fail-on-deny and a prompt was denied; the input could not be read
  2    usage error, or a policy that is missing or invalid, or an audit log in use or cut
  3    fuseraft speaks an unsupported protocolVersion (see --any-version)
  130  interrupted

ENVIRONMENT
  NO_COLOR   no colour in prompts and diffs on the terminal
  TERM       TERM=dumb turns colour off too

EXAMPLES
  Run an orchestration unattended in CI, the policy answering its prompts through a FIFO:
    mkfifo answers
    fuseraft run --bridge -c ci.yaml "fix the failing test" < answers \
      | fr-approve --policy examples/ci-go.yaml --audit approvals.log --output answers --fail-on-deny

  Answer the prompts of a daemon's tasks, asking on this terminal when the policy says ask:
    fr-attach --task "tidy go.mod" --input answers --exit-on-result \
      | fr-approve --policy examples/cautious.yaml --output answers

  What would the policy have done with a recorded run?
    fr-approve check --policy examples/ci-go.yaml run.jsonl --format table
`
