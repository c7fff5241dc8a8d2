// loadgen: a small keep-alive HTTP/1.1 load generator for bench/invoke.py's added-latency
// rows. wrk speaks only TCP and the workers listen on Unix sockets, so the direct baseline
// needs a client that speaks both; this one measures direct, gateway and nginx alike.
//
//	loadgen -c 16 -d 5s -rate 400 -path / unix:/run/a.sock unix:/run/b.sock
//	loadgen -c 16 -d 5s -rate 400 -path /fn/ns/name tcp:127.0.0.1:8080
//
// Connection i goes to target i modulo the number of targets. With -rate > 0 every
// connection sends at fixed times (rate/c per second each; a late request is sent at
// once, and its latency counts from when it was sent); -rate 0 is a closed loop.
// A failed exchange is counted in errors and its connection is made anew.
// Prints one JSON object: p50 and p99 in ms, requests/s, requests, errors.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func dial(target string) (net.Conn, error) {
	kind, addr, ok := strings.Cut(target, ":")
	if !ok || (kind != "unix" && kind != "tcp") {
		return nil, fmt.Errorf("target %q is not unix:PATH or tcp:HOST:PORT", target)
	}
	return net.Dial(kind, addr)
}

// one exchange: write the request, read the head and a content-length body
func exchange(conn net.Conn, r *bufio.Reader, request []byte) error {
	if _, err := conn.Write(request); err != nil {
		return err
	}
	tp := textproto.NewReader(r)
	status, err := tp.ReadLine()
	if err != nil {
		return err
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		return fmt.Errorf("answer %q", status)
	}
	head, err := tp.ReadMIMEHeader()
	if err != nil {
		return err
	}
	length, err := strconv.Atoi(head.Get("Content-Length"))
	if err != nil {
		return fmt.Errorf("no content-length")
	}
	_, err = io.CopyN(io.Discard, r, int64(length))
	return err
}

func main() {
	connections := flag.Int("c", 16, "connections")
	duration := flag.Duration("d", 5*time.Second, "duration")
	rate := flag.Float64("rate", 0, "requests per second in all (0: closed loop)")
	path := flag.String("path", "/", "request target")
	flag.Parse()
	targets := flag.Args()
	if len(targets) == 0 {
		fmt.Fprintln(os.Stderr, "usage: loadgen [-c N] [-d D] [-rate R] [-path P] unix:PATH|tcp:HOST:PORT ...")
		os.Exit(2)
	}
	request := []byte("GET " + *path + " HTTP/1.1\r\nHost: bench\r\n\r\n")
	var mu sync.Mutex
	var latencies []float64
	errors := 0
	var wg sync.WaitGroup
	start := time.Now()
	until := start.Add(*duration)
	for i := 0; i < *connections; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			conn, err := dial(targets[i%len(targets)])
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			defer func() { conn.Close() }()
			r := bufio.NewReader(conn)
			var interval time.Duration
			if *rate > 0 {
				interval = time.Duration(float64(*connections) / *rate * float64(time.Second))
			}
			// connections start spread over one interval, not all at once
			next := start.Add(interval * time.Duration(i) / time.Duration(*connections))
			own := make([]float64, 0, 4096)
			for {
				if interval > 0 {
					if wait := time.Until(next); wait > 0 {
						time.Sleep(wait)
					}
					next = next.Add(interval)
				}
				sent := time.Now()
				if sent.After(until) {
					break
				}
				if err := exchange(conn, r, request); err != nil {
					// counted, and the connection made anew (the next call measures that)
					mu.Lock()
					errors++
					mu.Unlock()
					conn.Close()
					if conn, err = dial(targets[i%len(targets)]); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(1)
					}
					r = bufio.NewReader(conn)
					continue
				}
				own = append(own, float64(time.Since(sent).Microseconds())/1000)
			}
			mu.Lock()
			latencies = append(latencies, own...)
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	sort.Float64s(latencies)
	at := func(q float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[int(q*float64(len(latencies)-1))]
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"p50": at(0.50), "p99": at(0.99), "rps": float64(len(latencies)) / elapsed,
		"requests": len(latencies), "errors": errors,
	})
}
