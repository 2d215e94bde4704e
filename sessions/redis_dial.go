package sessions

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/redis/go-redis/v9"
)

// dial builds the client opts describe: a Cluster client for opts.Cluster,
// a failover client for opts.Sentinel, else a single-node client from
// opts.URL. Credentials, database, TLS and timeouts come from opts.URL in
// every case (for Cluster and Sentinel it may be empty).
func dial(opts RedisOptions) (redis.UniversalClient, error) {
	if len(opts.Cluster) > 0 && opts.Sentinel != nil {
		return nil, errors.New("sessions: redis: cluster and sentinel are exclusive")
	}
	co := &redis.Options{}
	if opts.URL != "" || (len(opts.Cluster) == 0 && opts.Sentinel == nil) {
		var err error
		if co, err = redis.ParseURL(opts.URL); err != nil {
			// url.Parse errors quote the whole URL, password included.
			if ue := (*url.Error)(nil); errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, fmt.Errorf("sessions: redis url: %w", err)
		}
	}
	if co.DialTimeout == 0 {
		co.DialTimeout = defaultDialTimeout
	}
	if co.ReadTimeout == 0 {
		co.ReadTimeout = defaultIOTimeout
	}
	if co.WriteTimeout == 0 {
		co.WriteTimeout = defaultIOTimeout
	}
	// go-redis otherwise dials 5 times per command with 100 ms pauses.
	co.DialerRetries = 1
	co.ContextTimeoutEnabled = true
	switch {
	case len(opts.Cluster) > 0:
		if co.DB != 0 {
			return nil, errors.New("sessions: redis: Redis Cluster has only database 0")
		}
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: opts.Cluster, Username: co.Username, Password: co.Password, TLSConfig: co.TLSConfig,
			DialTimeout: co.DialTimeout, ReadTimeout: co.ReadTimeout, WriteTimeout: co.WriteTimeout,
			ContextTimeoutEnabled: true, DialerRetries: co.DialerRetries,
		}), nil
	case opts.Sentinel != nil:
		if opts.Sentinel.Master == "" || len(opts.Sentinel.Addrs) == 0 {
			return nil, errors.New("sessions: redis: sentinel needs a master name and addresses")
		}
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: opts.Sentinel.Master, SentinelAddrs: opts.Sentinel.Addrs,
			Username: co.Username, Password: co.Password, DB: co.DB, TLSConfig: co.TLSConfig,
			DialTimeout: co.DialTimeout, ReadTimeout: co.ReadTimeout, WriteTimeout: co.WriteTimeout,
			ContextTimeoutEnabled: true, DialerRetries: co.DialerRetries,
		}), nil
	}
	return redis.NewClient(co), nil
}
