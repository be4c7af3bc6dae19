package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/squallstream/squall/cluster/pki"
)

// devCerts are the certificates dev makes for itself under its data
// directory: a CA of its own (created once, kept across runs), the
// nimbus's, the supervisor's and an admin's for the client commands.
type devCerts struct {
	nimbus, supervisor *pki.Bundle
	adminDir           string
}

// makeDevCerts creates (or reloads) dev's CA in dir/ca and issues the
// certificates dev runs with, anew at each start.
func makeDevCerts(dir string) (*devCerts, error) {
	caDir := filepath.Join(dir, "ca")
	ca, err := pki.LoadAuthority(caDir)
	if errors.Is(err, os.ErrNotExist) {
		if ca, err = pki.NewAuthority("squall-dev", 0, time.Now()); err == nil {
			err = pki.WriteAuthority(caDir, ca)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("dev's certificate authority in %s: %w", caDir, err)
	}
	local := []string{"127.0.0.1", "::1", "localhost"}
	issue := func(role pki.Role, name string, hosts []string) (*pki.Bundle, error) {
		return ca.Issue(pki.Request{Role: role, Name: name, Hosts: hosts, Now: time.Now()})
	}
	d := &devCerts{adminDir: filepath.Join(dir, "admin")}
	if d.nimbus, err = issue(pki.Nimbus, "dev", local); err != nil {
		return nil, err
	}
	if d.supervisor, err = issue(pki.Supervisor, "dev", local); err != nil {
		return nil, err
	}
	admin, err := issue(pki.Admin, "dev", nil)
	if err != nil {
		return nil, err
	}
	if err := pki.WriteBundle(d.adminDir, admin); err != nil {
		return nil, err
	}
	return d, nil
}
