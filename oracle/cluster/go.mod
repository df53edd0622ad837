// The control plane's own module. It is never built against this file alone: build.sh
// generates one go.mod per Kubernetes release (in the cache, outside the repository) and passes
// it with -modfile, so this file only marks the module root.
module svclab.dev/oracle/cluster

go 1.26
