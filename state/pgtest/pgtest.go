// Package pgtest starts a throwaway PostgreSQL cluster for tests: initdb
// into a temporary directory (as the postgres OS user when the test runs as
// root, since PostgreSQL refuses to run as root), pg_ctl start on a free
// loopback port with trust authentication on 127.0.0.1 only, and removal of
// everything at the end. The server binaries come from
// scripts/ci-deps/postgres.sh.
//
// Under CI=true a missing PostgreSQL is a test failure, never a skip.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoPostgres says the server binaries were not found.
var ErrNoPostgres = errors.New("PostgreSQL server binaries (initdb, pg_ctl) not found: run scripts/ci-deps/postgres.sh")

// Cluster is one running throwaway server.
type Cluster struct {
	bin  string // directory holding initdb, pg_ctl, postgres
	dir  string // owns data/ and the socket
	port int
	cred *syscall.Credential // nil when not root
}

// FindBin returns the directory of the PostgreSQL server binaries: the
// newest /usr/lib/postgresql/*/bin, else wherever pg_ctl is on PATH.
func FindBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrNoPostgres
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start creates and starts a cluster. It returns ErrNoPostgres (wrapped)
// when the binaries are missing; Need turns that into a skip or, under
// CI=true, a failure.
func Start() (*Cluster, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "toolgate-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, PostgreSQL needs the postgres OS user: %w (scripts/ci-deps/postgres.sh creates it)", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if out, err := c.run("initdb", "-D", c.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if err := c.Restart(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// Need starts a cluster for t and stops it when t ends; a missing
// PostgreSQL skips t, or fails it under CI=true.
func Need(t testing.TB) *Cluster {
	t.Helper()
	c, err := Start()
	Check(t, err)
	t.Cleanup(c.Close)
	return c
}

// Check handles an error of Start for t: a missing PostgreSQL skips (fails
// under CI=true), anything else fails.
func Check(t testing.TB, err error) {
	t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, ErrNoPostgres) && os.Getenv("CI") != "true":
		t.Skip(err)
	default:
		t.Fatal(err)
	}
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = []string{"PATH=" + c.bin + ":/usr/bin:/bin", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "HOME=" + c.dir}
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

// Restart starts the server (again, after Stop) on a free loopback port,
// the same one as before when there was one.
func (c *Cluster) Restart() error {
	if c.port == 0 {
		p, err := freePort()
		if err != nil {
			return err
		}
		c.port = p
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=200", c.port, c.dir)
	out, err := c.run("pg_ctl", "start", "-w", "-t", "60", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-o", opts)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the server immediately (as a crash or an outage would look
// to clients); Restart brings it back with its data.
func (c *Cluster) Stop() error {
	out, err := c.run("pg_ctl", "stop", "-w", "-m", "immediate", "-D", c.data())
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

// Close stops the server and removes its files.
func (c *Cluster) Close() {
	_, _ = c.run("pg_ctl", "stop", "-w", "-m", "fast", "-D", c.data())
	os.RemoveAll(c.dir)
}

// DSN is the connection string of database db as the postgres superuser.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// NewDatabase creates an empty database with a name unique to t and
// returns its DSN, so tests sharing a cluster do not see each other.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	name := "t_" + strings.ToLower(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name += "_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	return c.DSN(name)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
