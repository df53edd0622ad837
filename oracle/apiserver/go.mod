// The apiserver oracle's own module. It is never built against this file alone: build.sh
// generates one go.mod per Kubernetes release under .work/ (git-ignored) and passes it with
// -modfile, so this file only marks the module root. The compare tool under ./compare needs
// nothing but the standard library and builds with this file as it is.
module svclab.dev/oracle/apiserver

go 1.26
