// pause: the sandbox ("infra") container of every pod on the sless test node, built here
// because no image registry outside the machine can be reached. It does what the upstream
// pause (kubernetes/build/pause/linux/pause.c) does: sleep until SIGINT or SIGTERM, and
// reap the zombies of the pod's shared PID namespace.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
