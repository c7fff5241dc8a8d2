// etcd for the sless test control plane: the upstream entry point, unchanged.
// Mirrors go.etcd.io/etcd/server/v3/main.go.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
