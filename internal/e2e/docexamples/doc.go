// Package docexamples holds only tests: of docs/cookbook.md and demo/run.sh. Every ```sh block of
// the cookbook is extracted under its recipe's heading and run with bash by a script in
// testdata/script against fr-sim, and the demo is run end to end, so a recipe or a demo that
// stops being true fails the build.
package docexamples
