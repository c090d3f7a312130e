package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"go.yaml.in/yaml/v3"
)

// k8sObject is the part of a manifest the deployment test reads.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Replicas int              `yaml:"replicas"`
		Selector yaml.Node        `yaml:"selector"`
		Ports    []map[string]any `yaml:"ports"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				Containers []struct {
					Args []string `yaml:"args"`
					Env  []struct {
						Name      string `yaml:"name"`
						Value     string `yaml:"value"`
						ValueFrom struct {
							SecretKeyRef struct {
								Name string `yaml:"name"`
								Key  string `yaml:"key"`
							} `yaml:"secretKeyRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					ReadinessProbe struct {
						HTTPGet struct {
							Path string `yaml:"path"`
						} `yaml:"httpGet"`
					} `yaml:"readinessProbe"`
					LivenessProbe struct {
						HTTPGet struct {
							Path string `yaml:"path"`
						} `yaml:"httpGet"`
					} `yaml:"livenessProbe"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
						SubPath   string `yaml:"subPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name      string `yaml:"name"`
					ConfigMap *struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func readManifest(t *testing.T, name string) k8sObject {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	var o k8sObject
	if err := yaml.Unmarshal(b, &o); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return o
}

// TestDeployKubernetes runs the shipped manifests' gateway as Kubernetes
// would, minus Kubernetes: the ConfigMap's workspace, the Deployment's
// arguments and environment (secret values made up here, the DSN a real
// PostgreSQL database), two replicas, probed where the Deployment probes.
// Replica 2 already carries a rotated signing key, as during a rolling
// update: the one chain verifies with the new public key and the old one
// given as previous, and not with the new key alone.
func TestDeployKubernetes(t *testing.T) {
	t.Parallel()
	cm, dep, svc := readManifest(t, "configmap.yaml"), readManifest(t, "deployment.yaml"), readManifest(t, "service.yaml")
	kust, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "kubernetes", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"configmap.yaml", "deployment.yaml", "service.yaml"} {
		if !strings.Contains(string(kust), "- "+f) {
			t.Errorf("kustomization.yaml does not list %s", f)
		}
	}
	if cm.Kind != "ConfigMap" || dep.Kind != "Deployment" || svc.Kind != "Service" {
		t.Fatalf("kinds %s %s %s", cm.Kind, dep.Kind, svc.Kind)
	}
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	switch {
	case dep.Spec.Replicas < 2:
		t.Errorf("replicas %d: a fleet has several", dep.Spec.Replicas)
	case c.ReadinessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Path != "/livez":
		t.Errorf("probes %q / %q", c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path)
	}
	wsPath := ""
	for i, a := range c.Args {
		if a == "-w" && i+1 < len(c.Args) {
			wsPath = c.Args[i+1]
		}
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == cm.Metadata.Name &&
				filepath.Join(m.MountPath, "toolgate.yaml") == wsPath {
				// A subPath mount is never updated: the reload would not see edits.
				mounted = m.SubPath == ""
			}
		}
	}
	if !mounted {
		t.Fatalf("the workspace %s is not the ConfigMap %s mounted as a directory", wsPath, cm.Metadata.Name)
	}

	dir := t.TempDir()
	writeFile(t, dir, "data.json", `{"a": 1, "b": 2}`)
	keys := map[string]string{}
	for _, k := range []string{"old", "new"} {
		priv, pub := filepath.Join(dir, k+".pem"), filepath.Join(dir, k+".pub")
		if r := toolgate(t, dir, nil, "audit", "keygen", "--private", priv, "--public", pub); r.code != 0 {
			t.Fatalf("keygen: %s", r.stderr)
		}
		keys[k] = priv
	}
	// The Deployment's environment: each secret key gets a value here.
	secrets := map[string]string{"dsn": fleetDSN(t), "admin-token": adminToken, "reader-token": "reader-token-for-tests"}
	var env []string
	for _, e := range c.Env {
		v := e.Value
		if ref := e.ValueFrom.SecretKeyRef; ref.Key != "" {
			var ok bool
			if v, ok = secrets[ref.Key]; !ok {
				t.Fatalf("the Deployment reads secret key %q, which this test (and docs/deploy.md) does not know", ref.Key)
			}
		}
		if e.Name == "HOME" || e.Name == "TMPDIR" {
			v = dir
		}
		env = append(env, e.Name+"="+v)
	}
	serveArgs := slices.Clone(c.Args[slices.Index(c.Args, "serve")+1:])
	var replicas []*daemon
	var clients []*client.Client
	var wsFiles []string
	for _, k := range []string{"old", "new"} {
		y := strings.ReplaceAll(cm.Data["toolgate.yaml"], "/etc/toolgate-keys/audit-signing.pem", keys[k])
		ws := writeFile(t, dir, k+"/toolgate.yaml", y)
		writeFile(t, dir, k+"/data.json", `{"a": 1, "b": 2}`)
		wsFiles = append(wsFiles, ws)
		args := slices.Clone(serveArgs)
		args[slices.Index(args, "-w")+1] = ws
		replicas = append(replicas, startDaemon(t, env, args...))
	}
	for i, d := range replicas {
		for _, probe := range []string{c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path} {
			resp, err := http.Get(d.base + probe)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("replica %d %s: %s", i, probe, resp.Status)
			}
		}
		var st struct {
			Store struct{ Kind string } `json:"store"`
		}
		if adminJSON(t, d, "GET", "/admin/status", &st) != http.StatusOK || st.Store.Kind != "postgres" {
			t.Fatalf("replica %d store %+v", i, st)
		}
		cl := mcpHTTP(t, d.base+"/mcp/json-tools", "reader-token-for-tests")
		clients = append(clients, cl)
		keysCall(t, cl)
	}
	// The rolling update ends: the old replica stops (its closing
	// checkpoint, old key), the new one serves on and stops later.
	stop := func(d *daemon) {
		_ = d.cmd.Process.Signal(os.Interrupt)
		_ = d.cmd.Wait()
	}
	stop(replicas[0])
	keysCall(t, clients[1])
	stop(replicas[1])
	fenv := []string{"TOOLGATE_PG_DSN=" + secrets["dsn"]}
	verify := func(args ...string) result {
		return toolgate(t, dir, fenv, append([]string{"audit", "verify", "-w", wsFiles[1]}, args...)...)
	}
	if r := verify("--public-key", filepath.Join(dir, "new.pub"), "--previous-key", filepath.Join(dir, "old.pub")); r.code != 0 ||
		!strings.Contains(r.stdout, "earlier checkpoints by previous keys") {
		t.Fatalf("verify across the rotation: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := verify("--public-key", filepath.Join(dir, "new.pub")); r.code == 0 {
		t.Fatalf("a chain holding the old key's checkpoints verified with the new key alone:\n%s", r.stdout)
	}
}

func keysCall(t *testing.T, cl *client.Client) {
	t.Helper()
	if text, isErr, _, err := call(t, cl, "keys", map[string]any{"file": "data.json"}); err != nil || isErr {
		t.Fatalf("json-tools keys: %q %v", text, err)
	}
}
