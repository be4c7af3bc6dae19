package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/squallstream/squall/cluster/pki"
)

// runCA creates a cluster CA and issues certificates (package pki):
//
//	ca init  --dir DIR [--name NAME] [--valid DUR]
//	ca issue --ca DIR --role ROLE --name NAME [--hosts H,...] [--valid DUR] --out DIR
func runCA(ctx context.Context, p *Program, args []string) error {
	if len(args) == 0 {
		return usageError("want a subcommand: ca init --dir DIR, or ca issue --ca DIR --role ROLE --name NAME --out DIR")
	}
	switch args[0] {
	case "init":
		fs := flag.NewFlagSet("ca init", flag.ContinueOnError)
		dir := fs.String("dir", "", "directory of the new CA (ca.crt, ca.key); must not hold one")
		name := fs.String("name", "squall", "the CA's name (its certificate's CommonName)")
		valid := fs.Duration("valid", pki.DefaultCAValidity, "validity of the CA certificate")
		if _, err := parse(p, fs, "ca", args[1:], 0); err != nil {
			return err
		}
		if *dir == "" {
			return usageError("--dir is required")
		}
		ca, err := pki.NewAuthority(*name, *valid, time.Now())
		if err != nil {
			return err
		}
		if err := pki.WriteAuthority(*dir, ca); err != nil {
			return err
		}
		fmt.Fprintf(p.Stdout, "created CA %q in %s (keep %s secret: it issues every identity of the cluster)\n",
			*name, *dir, filepath.Join(*dir, pki.CAKey))
		return nil
	case "issue":
		fs := flag.NewFlagSet("ca issue", flag.ContinueOnError)
		caDir := fs.String("ca", "", "directory of the CA (ca init --dir)")
		role := fs.String("role", "", "role: nimbus, supervisor, client or admin (workers get theirs from their supervisor)")
		name := fs.String("name", "", "the identity's name: a nimbus's or supervisor's ID, a user's name")
		hosts := fs.String("hosts", "", "comma-separated DNS names and IP addresses the holder serves at (nimbus, supervisor)")
		valid := fs.Duration("valid", pki.DefaultValidity, "validity of the certificate")
		out := fs.String("out", "", "directory to write ca.crt, tls.crt and tls.key to")
		if _, err := parse(p, fs, "ca", args[1:], 0); err != nil {
			return err
		}
		if *caDir == "" || *out == "" || *name == "" || *role == "" {
			return usageError("--ca, --role, --name and --out are required")
		}
		r, err := pki.ParseRole(*role)
		if err != nil {
			return usageError("--role: %v", err)
		}
		ca, err := pki.LoadAuthority(*caDir)
		if err != nil {
			return fmt.Errorf("--ca: %w", err)
		}
		b, err := ca.Issue(pki.Request{Role: r, Name: *name, Hosts: splitList(*hosts), Validity: *valid, Now: time.Now()})
		if err != nil {
			return err
		}
		if err := pki.WriteBundle(*out, b); err != nil {
			return err
		}
		fmt.Fprintf(p.Stdout, "issued %s/%s (valid until %s) in %s\n", r, *name, b.Cert.NotAfter.Format(time.DateOnly), *out)
		return nil
	}
	return usageError("unknown subcommand %q of ca: want init or issue", args[0])
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// certFlags is the --certs flag of the daemons and client commands.
type certFlags struct{ dir string }

func (c *certFlags) register(fs *flag.FlagSet, role string) {
	fs.StringVar(&c.dir, "certs", "", "directory of this "+role+"'s certificate (ca.crt, tls.crt, tls.key; see the ca command); "+
		"without it only loopback is allowed")
}

// errNoCerts: a command that needs certificates off loopback has none.
var errNoCerts = errors.New("certificates are required off loopback: give --certs DIR (create them with the ca command; see docs/security.md)")

// load reads the bundle, nil without --certs; the bundle's role must be
// one of want.
func (c *certFlags) load(want ...pki.Role) (*pki.Bundle, error) {
	if c.dir == "" {
		return nil, nil
	}
	b, err := pki.LoadBundle(c.dir)
	if err != nil {
		return nil, fmt.Errorf("--certs: %w", err)
	}
	id := b.Identity()
	for _, r := range want {
		if id.Role == r {
			return b, nil
		}
	}
	return nil, fmt.Errorf("--certs %s holds %s; this command needs a certificate of role %v", c.dir, id, want)
}
