// Package etcdauth sets up etcd's authentication for a squall cluster: one
// role per kind of daemon, one role per topology, and the users holding
// them, so that a daemon or a topology's workers can change only the keys
// they own.
//
// # Roles
//
// Keys are those of package cluster/meta, under a prefix P ("/squall" by
// default):
//
//	role (= user)              may read                       may write (and delete)
//	root                       everything                     everything; users, roles, auth itself
//	squall-nimbus              P/…                            P/…
//	squall-supervisor          P/…                            P/supervisors/…, P/crashes/…
//	squall-topology-<t>        P/assignments/<t>              P/workers/<t>/…, P/status/<t>, P/generations/<t>,
//	                           and what it may write          P/errors/<t>/…, P/coordination/<t>/…
//
// A topology's workers thus cannot touch another topology's keys, nor
// their own assignment (only the leader nimbus writes assignments), nor
// anything a daemon writes. The coordination keys are the etcdstore owner
// directory of the topology's name, escaped as etcdstore escapes it: a
// worker whose trident topology is named as the cluster's topology (the
// usual case) keeps its coordination there.
//
// # Users: certificates or passwords
//
// etcd authenticates a client by a user name and password (it then hands
// the client a token), or, on an etcd started with client certificate
// authentication (etcd's --client-cert-auth, etcdembed.Config.ClientCertAuth),
// by its TLS certificate: a client that gives no password is the user
// named by its certificate's CommonName. Both are supported:
//
//   - Passwords: Config.RootPassword, NimbusPassword and
//     SupervisorPassword are the users' passwords; the daemons connect
//     with --etcd-user and --etcd-password.
//   - Certificates (Config.ClientCerts): a user whose password is empty
//     has none and can authenticate only by certificate, so the
//     CommonName of each daemon's certificate must be its user name —
//     "squall-nimbus" for nimbuses, "squall-supervisor" for supervisors,
//     "root" for the administrator's. A certificate whose CommonName is
//     "root" is the administrator: issue one to no daemon.
//
// Topologies always get password users (GrantTopology): a random password
// per topology. On an etcd with client certificate authentication a
// worker still needs a certificate to pass the TLS handshake: give it one
// whose CommonName names no etcd user ("squall-worker"), never the
// supervisor's, because a client presenting the supervisor's certificate
// without a password acts as the supervisor. A request with a password
// token is the token's user whatever the certificate.
//
// # Who calls what
//
// etcd lets only root manage users, roles and authentication, so Enable,
// GrantTopology and RevokeTopology need a client acting as root: before
// authentication is enabled any client will do for the first Enable; after
// it, a client with the root user's password or a certificate named root.
// A clientv3.Client configured with root's password works before and
// after (etcd's client ignores "authentication is not enabled").
//
// Enable is idempotent: it adds what is missing, brings the permissions of
// its roles to the table above (revoking any other), sets the passwords
// it is given and enables authentication if it is off. GrantTopology is
// idempotent on the role; on the user it sets a new random password each
// time (workers still holding the old one are refused once etcd asks
// them to authenticate again), so call it when the topology's workers are
// (re)started with the credential it returns. RevokeTopology removes the
// user and the role.
//
// Role and user names carry no prefix: one etcd cluster with
// authentication serves one squall cluster.
package etcdauth
