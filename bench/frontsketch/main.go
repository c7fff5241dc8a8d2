// frontsketch: what the per-call work of the invoke path costs in a compiled front, for
// bench/invoke.py's "compiled front sketch" rows (issue 32). Not a server to use: it has
// none of the gateway's rules' substance, only their cost.
//
//	frontsketch -listen 127.0.0.1:8090 -journal /tmp/j.log unix:/run/a.sock unix:/run/b.sock
//
// Every request is relayed to the next worker socket (round robin, keep-alive) after the
// steps the gateway takes on every call, each done the cheap way a compiled front would:
// a route lookup in a map, the caller's token hashed (SHA-256) and looked up, the
// tenant's in-flight count checked and taken (atomic), a fresh invocation id, the
// request's headers copied without the hop-by-hop and reserved ones plus the ones the
// platform adds (invocation id, X-Forwarded-For, traceparent), the answer's headers
// copied without the hop-by-hop ones, a counter and a latency bucket, and one journal
// line per call appended with one write(2), as the gateway's journal does.
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true,
	"Upgrade": true, "Proxy-Connection": true,
}

type front struct {
	sockets   []string
	next      atomic.Uint64
	transport *http.Transport
	routes    map[string]int
	tokens    map[[32]byte]string
	inFlight  atomic.Int64
	limit     int64
	calls     atomic.Uint64
	buckets   [12]atomic.Uint64
	journal   *os.File
	ids       chan string
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	_ = f.routes[r.URL.Path]
	token := sha256.Sum256([]byte(r.Header.Get("Authorization")))
	_ = f.tokens[token]
	if f.inFlight.Add(1) > f.limit {
		f.inFlight.Add(-1)
		http.Error(w, "too many calls", http.StatusTooManyRequests)
		return
	}
	defer f.inFlight.Add(-1)
	id := <-f.ids
	out, err := http.NewRequestWithContext(r.Context(), r.Method, "http://worker"+r.URL.RequestURI(), r.Body)
	if err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	for name, values := range r.Header {
		if hopByHop[name] || strings.HasPrefix(name, "X-Sless-") || name == "Traceparent" {
			continue
		}
		out.Header[name] = values
	}
	out.Header.Set("X-Sless-Invocation-Id", id)
	out.Header.Set("X-Forwarded-For", r.RemoteAddr)
	out.Header.Set("Traceparent", "00-"+id+"-"+id[:16]+"-01")
	out.ContentLength = r.ContentLength
	answer, err := f.transport.RoundTrip(out)
	if err != nil {
		http.Error(w, "upstream failed", http.StatusBadGateway)
		return
	}
	defer answer.Body.Close()
	for name, values := range answer.Header {
		if !hopByHop[name] {
			w.Header()[name] = values
		}
	}
	w.WriteHeader(answer.StatusCode)
	sent, _ := io.Copy(w, answer.Body)
	elapsed := time.Since(start)
	f.calls.Add(1)
	bucket := 0
	for limit := 100 * time.Microsecond; bucket < len(f.buckets)-1 && elapsed > limit; limit *= 2 {
		bucket++
	}
	f.buckets[bucket].Add(1)
	line := fmt.Sprintf(
		`{"id":"%s","path":%s,"status":%d,"bytes":%d,"started":%d,"ms":%.3f}`+"\n",
		id, strconv.Quote(r.URL.Path), answer.StatusCode, sent, start.UnixMicro(),
		float64(elapsed.Microseconds())/1000,
	)
	if _, err := f.journal.Write([]byte(line)); err != nil {
		log.Printf("journal: %v", err)
	}
}

// invocation ids drawn ahead, 4 KiB of randomness at a time, as the gateway does
func (f *front) drawIds() {
	buffer := make([]byte, 4096)
	for {
		if _, err := rand.Read(buffer); err != nil {
			log.Fatal(err)
		}
		for i := 0; i+16 <= len(buffer); i += 16 {
			f.ids <- hex.EncodeToString(buffer[i : i+16])
		}
	}
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8090", "address to serve")
	journalPath := flag.String("journal", "frontsketch.journal", "journal file")
	flag.Parse()
	f := &front{routes: map[string]int{"/": 0}, tokens: map[[32]byte]string{}, limit: 1000,
		ids: make(chan string, 256)}
	for _, target := range flag.Args() {
		f.sockets = append(f.sockets, strings.TrimPrefix(target, "unix:"))
	}
	if len(f.sockets) == 0 {
		log.Fatal("no worker sockets")
	}
	var dialer net.Dialer
	f.transport = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			socket := f.sockets[f.next.Add(1)%uint64(len(f.sockets))]
			return dialer.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		DisableCompression:  true,
	}
	journal, err := os.OpenFile(*journalPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		log.Fatal(err)
	}
	f.journal = journal
	go f.drawIds()
	server := &http.Server{Addr: *listen, Handler: f, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("frontsketch on %s, %d sockets", *listen, len(f.sockets))
	log.Fatal(server.ListenAndServe())
}
