package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// Secret implements Store.Secret: the first process to ask creates the
// secret (INSERT … ON CONFLICT DO NOTHING), every process reads the stored
// value, so concurrent first uses agree.
func (s *sqlStore) Secret(ctx context.Context, name string) ([]byte, error) {
	var fresh [32]byte
	if _, err := rand.Read(fresh[:]); err != nil {
		return nil, fmt.Errorf("state: random secret: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`), name, hex.EncodeToString(fresh[:])); err != nil {
		return nil, s.wrap("create secret", err)
	}
	var v string
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT value FROM secrets WHERE name = ?`), name).Scan(&v); err != nil {
		return nil, s.wrap("read secret", err)
	}
	b, err := hex.DecodeString(v)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("state: secret %q is damaged; delete its row to have a new one made (state sealed with the old one is then refused)", name)
	}
	return b, nil
}
