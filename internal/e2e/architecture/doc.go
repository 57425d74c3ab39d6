// Package architecture holds the tests that keep fr's tree as docs/architecture.md draws it:
// cmd/fr-<tool> runs internal/cmd/<tool>, commands (internal/cmd/<tool>) import no other command, shared packages (internal/<name>)
// import no command, only tests import the test kit (internal/testkit), pkg/wire imports
// nothing of ours but the leaves (internal/jsonscan, internal/proc, internal/humanize), which
// import nothing of ours; and no function outside tests has a cyclomatic complexity of 30 or
// more.
package architecture
