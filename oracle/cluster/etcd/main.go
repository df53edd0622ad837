// Command etcd is etcd's server as its own release builds it (etcdmain.Main is what etcd's
// main package calls), from the go.etcd.io/etcd/server/v3 version the Kubernetes release's
// go.mod requires: the control plane runs the etcd that release was tested with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
