// SPDX-License-Identifier: Apache-2.0

package forge

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// requestTimeout bounds one API request whose context has no earlier
// deadline. The Gitea SDK takes no context per call, and a forge that
// stops answering must not wedge the loop.
const requestTimeout = 30 * time.Second

// timeoutTransport gives every request a deadline of at most d, lasting
// until its body is closed.
type timeoutTransport struct {
	base http.RoundTripper
	d    time.Duration
}

func withTimeout(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &timeoutTransport{base: base, d: requestTimeout}
}

func (t *timeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.d)
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// statusRecorder keeps the status of the last answer, for SDK errors that
// drop it.
type statusRecorder struct {
	base http.RoundTripper
	last atomic.Int32
}

func (r *statusRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err == nil {
		r.last.Store(int32(resp.StatusCode))
	}
	return resp, err
}
