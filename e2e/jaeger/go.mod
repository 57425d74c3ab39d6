// A module of its own for the end-to-end check against a real Jaeger v2 (make e2e-otel), so that
// Jaeger's many dependencies never reach fr's go.mod.
module github.com/fuseraft/fr/e2e/jaeger

go 1.26.0

tool github.com/jaegertracing/jaeger/cmd/jaeger

require github.com/jaegertracing/jaeger v1.75.0

replace github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0
