package redisconn

import "github.com/spf13/pflag"

// Bind binds the flags every command takes to reach Redis into o, named here once, beside the
// fields they fill (limitctl help connections explains them).
func (o *Options) Bind(pf *pflag.FlagSet) {
	pf.StringVarP(&o.URL, "url", "u", "", "Redis `URL`: redis://host:port[/db], rediss://..., unix:///path or redis+sentinel://host:port/MASTER, user:password@ before the host (env REDIS_URL)")
	pf.StringArrayVar(&o.Addrs, "addr", nil, "Redis host:port (repeat for a cluster's seed nodes)")
	pf.BoolVar(&o.Cluster, "cluster", false, "treat the target as a Redis Cluster")
	pf.StringVar(&o.Username, "username", "", "ACL username")
	pf.StringVar(&o.Password, "password", "", "password (prefer env REDISCLI_AUTH or --password-file: flags show in ps)")
	pf.StringVar(&o.PasswordFile, "password-file", "", "read the password from this file")
	pf.StringArrayVar(&o.Sentinels, "sentinel", nil, "Sentinel host:port (repeatable): reach the current master of --master through the Sentinels")
	pf.StringVar(&o.Master, "master", "", "the master's name as the Sentinels monitor it (with --sentinel)")
	pf.StringVar(&o.SentinelUsername, "sentinel-username", "", "the Sentinels' own ACL username, when they have one")
	pf.StringVar(&o.SentinelPassword, "sentinel-password", "", "the Sentinels' own password (prefer --sentinel-password-file: flags show in ps)")
	pf.StringVar(&o.SentinelPasswordFile, "sentinel-password-file", "", "read the Sentinels' password from this file")
	pf.IntVar(&o.DB, "db", 0, "database number (not with a cluster)")
	pf.BoolVar(&o.TLS, "tls", false, "connect with TLS")
	pf.StringVar(&o.TLSCA, "tls-ca", "", "CA certificate (PEM) to verify the server")
	pf.StringVar(&o.TLSCert, "tls-cert", "", "client certificate (PEM)")
	pf.StringVar(&o.TLSKey, "tls-key", "", "client private key (PEM)")
	pf.BoolVar(&o.TLSInsecure, "tls-insecure", false, "skip verification of the server's certificate (unsafe)")
	pf.DurationVar(&o.Timeout, "timeout", DefaultTimeout, "bound on connecting and on every Redis call")
}
