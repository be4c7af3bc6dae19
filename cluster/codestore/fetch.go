package codestore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxErrorBody bounds what Fetch reads (and quotes) of a refusal's body.
const maxErrorBody = 512

// Fetch downloads the artifact dg from url with c (whose transport decides
// whom it trusts: a supervisor's accepts nimbus certificates only) and
// stores it in the Dir only if its content hashes to dg: otherwise nothing
// is stored and the error matches ErrCorrupt. A response other than 200 OK
// is an error quoting at most the first 512 bytes of its body. It is the
// one download of code, for the nimbuses' sync and the supervisors alike;
// which holders may be asked (HTTPS only, say) is the caller's decision.
func (d *Dir) Fetch(ctx context.Context, c *http.Client, url string, dg Digest) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(msg)))
	}
	return d.PutVerified(dg, resp.Body)
}
