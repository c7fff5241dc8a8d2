// CoreDNS for the test node: the cluster's DNS (Service kube-system/kube-dns), built with
// only the plugins the node's Corefile (tools/kube-testenv/node.bash) uses. This is
// upstream's own way to choose plugins (coremain.Run with the plugins imported); the
// upstream coredns binary imports all ~60 of them (cloud DNS providers, etcd, ...), which
// this node would compile and never use.
package main

import (
	_ "github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
