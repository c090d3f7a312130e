package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// notifyChannel is the LISTEN/NOTIFY channel; the payload is the topic.
const notifyChannel = "toolgate_state"

// migrationLock is the advisory lock key held while migrating, so two
// replicas starting at once apply each step once.
const migrationLock = 0x746f6f6c67617465 // "toolgate"

// Postgres is the several-machines store: approvals, tasks, jobs and the
// audit chain are rows of one database; LISTEN/NOTIFY wakes a call waiting
// on one replica when its approval lands on another.
type Postgres struct {
	*sqlStore
	cfg  *pgx.ConnConfig
	stop context.CancelFunc
	done chan struct{}
	once sync.Once
}

// connectTimeout bounds connecting when the DSN sets no connect_timeout.
const connectTimeout = 10 * time.Second

// OpenPostgres connects to the database of dsn, creates or migrates its
// schema (idempotent, under an advisory lock) and starts listening for
// changes. Errors name the host, database and user, never the password.
func OpenPostgres(ctx context.Context, dsn string) (*Postgres, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx redacts passwords only on a best-effort basis: say what is
		// wrong without quoting its message.
		return nil, errors.New("state: the PostgreSQL DSN (gateway.state.postgres.dsn) cannot be parsed: use postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=… or the key=value form; the value is not shown because it may hold a password")
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	where := fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	p := &Postgres{cfg: cfg, done: make(chan struct{})}
	p.sqlStore = newSQLStore(db, dialect{name: "postgres", postgres: true, lock: pgLock, notify: pgNotify}, where)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("state: cannot connect to PostgreSQL at %s:%d (database %q, user %q): %s; check gateway.state.postgres.dsn, that the server runs and accepts this user from this machine",
			cfg.Host, cfg.Port, cfg.Database, cfg.User, scrub(err, cfg.Password))
	}
	if err := p.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("state %s: %s", where, scrub(err, cfg.Password))
	}
	ready := make(chan error, 1)
	wctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	go p.listen(wctx, ready)
	select {
	case err := <-ready:
		if err != nil {
			cancel()
			<-p.done
			db.Close()
			return nil, fmt.Errorf("state %s: LISTEN: %s", where, scrub(err, cfg.Password))
		}
	case <-ctx.Done():
		cancel()
		<-p.done
		db.Close()
		return nil, ctx.Err()
	}
	return p, nil
}

// scrub renders err without the password, should a driver ever quote it.
func scrub(err error, password string) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if password != "" {
		s = strings.ReplaceAll(s, password, "********")
	}
	return s
}

func pgLock(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))`, key)
	return err
}

func pgNotify(ctx context.Context, tx *sql.Tx, topic string) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, topic)
	return err
}

// migrate applies the schema under a session advisory lock, so replicas
// that start together do not race each other's CREATE statements.
func (p *Postgres) migrate(ctx context.Context) error {
	conn, err := p.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	return migrate(ctx, p.db, p.d)
}

// listen holds a connection of its own with LISTEN toolgate_state and
// wakes the topic's subscribers on each notification. When the connection
// drops it wakes everyone (they re-check) and reconnects with backoff.
func (p *Postgres) listen(ctx context.Context, ready chan<- error) {
	defer close(p.done)
	backoff := 50 * time.Millisecond
	for first := true; ; first = false {
		conn, err := pgx.ConnectConfig(ctx, p.cfg)
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+notifyChannel)
		}
		if first {
			ready <- err
			if err != nil {
				if conn != nil {
					conn.Close(context.Background())
				}
				return
			}
		}
		if err == nil {
			backoff = 50 * time.Millisecond
			p.wakeAll() // anything missed while disconnected
			for {
				n, werr := conn.WaitForNotification(ctx)
				if werr != nil {
					break
				}
				if h, ok := p.hubs[n.Payload]; ok {
					h.wake()
				}
			}
			conn.Close(context.Background())
			p.wakeAll()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

func (p *Postgres) wakeAll() {
	for _, h := range p.hubs {
		h.wake()
	}
}

// Close stops listening and closes the connections.
func (p *Postgres) Close() error {
	var err error
	p.once.Do(func() {
		p.stop()
		<-p.done
		err = p.db.Close()
	})
	return err
}
