package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/squallstream/squall/cluster/etcdauth"
)

// runEtcdAuth enables etcd's authentication for the cluster: the root
// user, the daemons' users and roles (package etcdauth). Run it once, as
// root (before authentication is on, any client may); passwords come
// from files, never from the command line.
func runEtcdAuth(ctx context.Context, p *Program, args []string) error {
	fs := flag.NewFlagSet("etcd-auth", flag.ContinueOnError)
	var e etcdFlags
	e.register(fs)
	rootFile := fs.String("root-password-file", "", "file holding the password to give etcd's root user")
	nimbusFile := fs.String("nimbus-password-file", "", "file holding the password of the squall-nimbus user")
	supFile := fs.String("supervisor-password-file", "", "file holding the password of the squall-supervisor user")
	certs := fs.Bool("client-certs", false, "the daemons authenticate with client certificates whose CommonName is their etcd user (passwords optional)")
	if _, err := parse(p, fs, "etcd-auth", args, 0); err != nil {
		return err
	}
	cfg := etcdauth.Config{Prefix: e.prefix, ClientCerts: *certs}
	var err error
	for _, f := range []struct {
		flag, name string
		to         *string
	}{{"--root-password-file", *rootFile, &cfg.RootPassword}, {"--nimbus-password-file", *nimbusFile, &cfg.NimbusPassword},
		{"--supervisor-password-file", *supFile, &cfg.SupervisorPassword}} {
		if *f.to, err = readSecretFile(f.flag, f.name); err != nil {
			return usageError("%v", err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return usageError("%v", err)
	}
	cli, err := e.client()
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, e.dialTimeout*6)
	defer cancel()
	if err := etcdauth.Enable(ctx, cli, cfg); err != nil {
		return err
	}
	fmt.Fprintf(p.Stdout, "etcd authentication on for %s: users root, %s, %s\n", e.prefix, etcdauth.NimbusUser, etcdauth.SupervisorUser)
	return nil
}
