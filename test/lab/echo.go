// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// EchoArgs are the args of an EchoImage container that answers on the
// given HTTP and TCP ports with "<cluster> <pod>\n", the pod being its
// HOSTNAME. GET /readyz answers 200 until POST /readyz?fail=true, and 200
// again after POST /readyz?fail=false, so a readiness probe on it lets a
// test take a pod out of service without stopping it.
func EchoArgs(cluster string, httpPorts, tcpPorts []int) []string {
	args := []string{"--cluster=" + cluster}
	for _, p := range httpPorts {
		args = append(args, "--http="+strconv.Itoa(p))
	}
	for _, p := range tcpPorts {
		args = append(args, "--tcp="+strconv.Itoa(p))
	}
	return args
}

type portList []int

func (p *portList) String() string { return fmt.Sprint(*p) }
func (p *portList) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: want 1-65535", s)
	}
	*p = append(*p, n)
	return nil
}

func echoMain(args []string) int {
	fs := flag.NewFlagSet("echo", flag.ContinueOnError)
	cluster := fs.String("cluster", "", "cluster name to answer with")
	var httpPorts, tcpPorts portList
	fs.Var(&httpPorts, "http", "HTTP port (repeatable)")
	fs.Var(&tcpPorts, "tcp", "TCP port that writes the answer and closes (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(httpPorts)+len(tcpPorts) == 0 {
		fmt.Fprintln(os.Stderr, "echo: no --http or --tcp port")
		return 2
	}
	answer := fmt.Sprintf("%s %s\n", *cluster, os.Getenv("HOSTNAME"))
	var failing atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			failing.Store(r.URL.Query().Get("fail") == "true")
			fmt.Fprintf(w, "failing=%v\n", failing.Load())
			return
		}
		if failing.Load() {
			http.Error(w, "failing on request", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, answer) })

	errc := make(chan error, len(httpPorts)+len(tcpPorts))
	for _, p := range httpPorts {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			fmt.Fprintf(os.Stderr, "echo: %v\n", err)
			return 1
		}
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { errc <- srv.Serve(l) }()
	}
	for _, p := range tcpPorts {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			fmt.Fprintf(os.Stderr, "echo: %v\n", err)
			return 1
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					errc <- err
					return
				}
				io.WriteString(c, answer)
				c.Close()
			}
		}()
	}
	fmt.Fprintf(os.Stderr, "echo: %s answering on http %v tcp %v\n", strings.TrimSpace(answer), httpPorts, tcpPorts)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-sig:
		return 0
	case err := <-errc:
		fmt.Fprintf(os.Stderr, "echo: %v\n", err)
		return 1
	}
}

// getMain is `get [-n N] [-timeout D] [-wait D] URL`: N GET requests, each body
// printed; a failed request prints its error. Exit 1 if any failed. Run in
// a pod it resolves names through the pod's resolv.conf.
func getMain(args []string) int {
	fs := flag.NewFlagSet("get", flag.ContinueOnError)
	n := fs.Int("n", 1, "requests to send")
	timeout := fs.Duration("timeout", 2*time.Second, "per request")
	wait := fs.Duration("wait", 0, "retry the first request for up to this long (a new Service takes kube-proxy a moment)")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: get [-n N] [-timeout D] [-wait D] URL")
		return 2
	}
	// A new connection per request, as separate clients would open:
	// kube-proxy balances connections, not requests.
	c := &http.Client{Timeout: *timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	for deadline := time.Now().Add(*wait); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := get(context.Background(), c, fs.Arg(0)); err == nil {
			break
		}
	}
	rc := 0
	for range *n {
		body, err := get(context.Background(), c, fs.Arg(0))
		if err != nil {
			fmt.Printf("error: %v\n", err)
			rc = 1
			continue
		}
		fmt.Print(body)
	}
	return rc
}

func get(ctx context.Context, c *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}
