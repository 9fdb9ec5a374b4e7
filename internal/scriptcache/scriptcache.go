// Package scriptcache puts limitctl's Lua on Redis servers and checks it is there: SCRIPT LOAD
// on every node, the Functions library on every master, SCRIPT EXISTS per node. It is the one
// owner of FUNCTION LOAD, shared by `scripts load` and the hammer's strategies.
package scriptcache

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/scripts"
)

// Source is a script to load or check: a shipped one or a file's.
type Source struct {
	Name, Source string
}

// Select resolves script names and file paths; no names and no files means every shipped
// script. Unknown names and unreadable files are usage errors.
func Select(names, files []string) ([]Source, error) {
	var out []Source
	for _, n := range names {
		s, err := scripts.Lookup(n)
		if err != nil {
			return nil, exitcode.Usagef("%v", err)
		}
		out = append(out, Source{s.Name, s.Source})
	}
	for _, path := range files {
		src, err := scripts.ReadFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, Source{strings.TrimSuffix(filepath.Base(path), ".lua"), src})
	}
	if len(names) == 0 && len(files) == 0 {
		for _, s := range scripts.All() {
			out = append(out, Source{s.Name, s.Source})
		}
	}
	return out, nil
}

// Loaded is one script (or the Functions library) loaded on one node.
type Loaded struct {
	Name         string `json:"name"`
	SHA1         string `json:"sha1"`
	Node         string `json:"node"`
	CachedBefore bool   `json:"cached_before"`
}

// Load SCRIPT LOADs each source on every node, replicas included (Redis 7 does not replicate
// SCRIPT LOAD, so a replica promoted by a failover would answer NOSCRIPT), and checks the SHA1
// Redis answers is the one computed here.
func Load(ctx context.Context, rdb redis.UniversalClient, sources []Source) (LoadReport, error) {
	nodes, release, err := redisconn.AllNodes(ctx, rdb)
	defer release()
	if err != nil {
		return LoadReport{}, err
	}
	loaded := []Loaded{}
	for _, node := range nodes {
		addr := redisconn.NodeAddr(node)
		for _, s := range sources {
			want := scripts.SHA1(s.Source)
			exists, err := node.ScriptExists(ctx, want).Result()
			if err != nil {
				return LoadReport{}, fmt.Errorf("%s: SCRIPT EXISTS: %w", addr, err)
			}
			got, err := node.ScriptLoad(ctx, s.Source).Result()
			if err != nil {
				return LoadReport{}, fmt.Errorf("%s: Redis rejected script %s: %s", addr, s.Name, human.FirstLine(err.Error()))
			}
			if got != want {
				return LoadReport{}, fmt.Errorf("%s: script %s: Redis answered SHA1 %s, expected %s", addr, s.Name, got, want)
			}
			loaded = append(loaded, Loaded{Name: s.Name, SHA1: got, Node: addr, CachedBefore: len(exists) > 0 && exists[0]})
		}
	}
	return LoadReport{Loaded: loaded}, nil
}

// LoadLibrary replaces the limitctl Functions library on every master (Functions replicate,
// so masters suffice) and says, per master, whether the same code was there before.
func LoadLibrary(ctx context.Context, rdb redis.UniversalClient) (LoadReport, error) {
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return LoadReport{}, err
	}
	lib := scripts.FunctionsLibrary()
	loaded := []Loaded{}
	for _, node := range masters {
		addr := redisconn.NodeAddr(node)
		before, err := node.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: scripts.LibraryName, WithCode: true}).Result()
		if err != nil {
			return LoadReport{}, fmt.Errorf("%s: FUNCTION LIST: %w", addr, err)
		}
		if err := loadLibrary(ctx, node); err != nil {
			return LoadReport{}, fmt.Errorf("%s: %w", addr, err)
		}
		loaded = append(loaded, Loaded{Name: scripts.LibraryName, SHA1: scripts.SHA1(lib), Node: addr,
			CachedBefore: len(before) == 1 && before[0].Code == lib})
	}
	return LoadReport{Loaded: loaded}, nil
}

var (
	libraryMu    sync.Mutex
	libraryLoads atomic.Uint64 // InstallLibrary calls that loaded the library
)

// InstallLibrary loads the Functions library on every master, as a strategy does before its
// first FCALL or once the library went missing; concurrent callers load it once at a time.
func InstallLibrary(ctx context.Context, rdb redis.Cmdable) error {
	libraryMu.Lock()
	defer libraryMu.Unlock()
	var err error
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return loadLibrary(ctx, node)
		})
	} else {
		err = loadLibrary(ctx, rdb)
	}
	if err == nil {
		libraryLoads.Add(1)
	}
	return err
}

// LibraryLoads counts this process's loads of the library (InstallLibrary): a caller whose
// FCALL failed tells by it whether another caller loaded the library since it looked, so the
// library it did not find is there now.
func LibraryLoads() uint64 { return libraryLoads.Load() }

// LibraryLoadsSettled is LibraryLoads once any load under way has finished: a load counts only
// after its FUNCTION LOAD was answered, so a caller that finds the library present while another
// is loading it must wait for that count, or take a library loaded since it looked for one that
// was always there.
func LibraryLoadsSettled() uint64 {
	libraryMu.Lock()
	defer libraryMu.Unlock()
	return libraryLoads.Load()
}

// LibraryMissing reports whether some master lacks the limitctl Functions library (FUNCTION
// LIST), as after a FUNCTION FLUSH; an error means it cannot tell (+function|list refused).
func LibraryMissing(ctx context.Context, rdb redis.Cmdable) (bool, error) {
	missing := func(ctx context.Context, node redis.Cmdable) (bool, error) {
		libs, err := node.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: scripts.LibraryName}).Result()
		return len(libs) == 0, err
	}
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return missing(ctx, rdb)
	}
	var mu sync.Mutex
	any := false
	err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		m, err := missing(ctx, node)
		mu.Lock()
		any = any || m
		mu.Unlock()
		return err
	})
	return any, err
}

// loadLibrary is the one FUNCTION LOAD REPLACE of the limitctl library on one node.
func loadLibrary(ctx context.Context, node redis.Cmdable) error {
	name, err := node.FunctionLoadReplace(ctx, scripts.FunctionsLibrary()).Result()
	if err != nil {
		return fmt.Errorf("FUNCTION LOAD: %w", err)
	}
	if name != scripts.LibraryName {
		return fmt.Errorf("FUNCTION LOAD answered library %q, expected %q", name, scripts.LibraryName)
	}
	return nil
}

// ScriptStatus is whether one script is cached on a node.
type ScriptStatus struct {
	Name   string `json:"name"`
	SHA1   string `json:"sha1"`
	Cached bool   `json:"cached"`
}

// NodeStatus is one node's script cache.
type NodeStatus struct {
	Node    string         `json:"node"`
	Role    string         `json:"role"`
	Scripts []ScriptStatus `json:"scripts"`
}

// Status asks every node, replicas included, whether each source is in its script cache;
// the report's Missing counts the absences over all nodes.
func Status(ctx context.Context, rdb redis.UniversalClient, sources []Source) (StatusReport, error) {
	all, release, err := redisconn.AllNodes(ctx, rdb)
	defer release()
	if err != nil {
		return StatusReport{}, err
	}
	var nodes []NodeStatus
	missing := 0
	shas := make([]string, len(sources))
	for i, s := range sources {
		shas[i] = scripts.SHA1(s.Source)
	}
	for _, node := range all {
		addr := redisconn.NodeAddr(node)
		role, err := redisconn.Role(ctx, node)
		if err != nil {
			return StatusReport{}, fmt.Errorf("%s: ROLE: %w", addr, err)
		}
		exists, err := node.ScriptExists(ctx, shas...).Result()
		if err != nil {
			return StatusReport{}, fmt.Errorf("%s: SCRIPT EXISTS: %w", addr, err)
		}
		n := NodeStatus{Node: addr, Role: role, Scripts: []ScriptStatus{}}
		for i, s := range sources {
			cached := i < len(exists) && exists[i]
			if !cached {
				missing++
			}
			n.Scripts = append(n.Scripts, ScriptStatus{Name: s.Name, SHA1: shas[i], Cached: cached})
		}
		nodes = append(nodes, n)
	}
	return StatusReport{Nodes: nodes, Missing: missing}, nil
}
