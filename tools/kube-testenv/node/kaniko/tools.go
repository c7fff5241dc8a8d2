//go:build tools

// Package kaniko only pins the executor's module; `go build` builds
// github.com/GoogleContainerTools/kaniko/cmd/executor from it.
package kaniko

import _ "github.com/GoogleContainerTools/kaniko/cmd/executor"
