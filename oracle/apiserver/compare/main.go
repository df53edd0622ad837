// Command compare runs the apiserver oracle and `svclab check --output json` on the same
// scenarios and reports where they disagree.
//
//	go run ./compare -releases v1.37.2,v1.36.5 [-scenarios testdata] [-svclab PATH] [-bindir DIR]
//
// (from oracle/apiserver). For every release it builds the oracle with build.sh (cached), runs
// all scenarios through it in one batch, runs svclab once per scenario with the scenario's
// ClusterProfile set to that release, and compares object by object (README.md lists what).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// scenario is one file of the scenarios directory.
type scenario struct {
	ID          string            `json:"id"`
	Description string            `json:"description,omitempty"`
	MinMinor    int               `json:"minMinor,omitempty"`
	MaxMinor    int               `json:"maxMinor,omitempty"`
	Objects     []json.RawMessage `json:"objects"`
}

// oracleCase is one line of the oracle's output.
type oracleCase struct {
	ID      string          `json:"id"`
	Release string          `json:"release"`
	Error   *string         `json:"error"`
	Results []oracleResult  `json:"results"`
	Notes   []string        `json:"notes"`
	Millis  float64         `json:"millis"`
	Raw     json.RawMessage `json:"-"`
}

type oracleResult struct {
	Index               int      `json:"index"`
	Kind                string   `json:"kind"`
	Namespace           string   `json:"namespace"`
	Name                string   `json:"name"`
	Op                  string   `json:"op"`
	Outcome             string   `json:"outcome"`
	Status              *status  `json:"status"`
	Warnings            []string `json:"warnings"`
	Panic               string   `json:"panic"`
	Type                string   `json:"type"`
	ClusterIPs          []string `json:"clusterIPs"`
	IPFamilies          []string `json:"ipFamilies"`
	IPFamilyPolicy      string   `json:"ipFamilyPolicy"`
	NodePorts           []int32  `json:"nodePorts"`
	HealthCheckNodePort int32    `json:"healthCheckNodePort"`
}

type status struct {
	Code    int32   `json:"code"`
	Reason  string  `json:"reason"`
	Message string  `json:"message"`
	Causes  []cause `json:"causes"`
}

type cause struct {
	Reason  string `json:"reason"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// report is the part of svclab's report the comparison reads.
type report struct {
	Services    []serviceReport `json:"services"`
	Diagnostics []diagnostic    `json:"diagnostics"`
}

type serviceReport struct {
	Namespace      string   `json:"namespace"`
	Name           string   `json:"name"`
	Type           string   `json:"type"`
	Outcome        string   `json:"outcome"`
	ClusterIPs     []string `json:"clusterIPs"`
	IPFamilies     []string `json:"ipFamilies"`
	IPFamilyPolicy string   `json:"ipFamilyPolicy"`
	Ports          []struct {
		NodePort int32 `json:"nodePort"`
	} `json:"ports"`
	HealthCheckNodePort int32   `json:"healthCheckNodePort"`
	Source              *source `json:"source"`
}

type diagnostic struct {
	Severity string `json:"severity"`
	Object   *struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"object"`
	Field   string  `json:"field"`
	Reason  string  `json:"reason"`
	Message string  `json:"message"`
	Source  *source `json:"source"`
}

type source struct {
	Document int `json:"document"`
}

// answer is one object's answer in a form both sides are put into.
type answer struct {
	Kind      string   `json:"kind"`
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Op        string   `json:"op"`
	Outcome   string   `json:"outcome"`
	Errors    []string `json:"errors"`   // "Reason field: message" per cause (or the status)
	Warnings  []string `json:"warnings"` // in order
	// Service fields, for accepted Services.
	Type                string   `json:"type,omitempty"`
	ClusterIPs          []string `json:"clusterIPs,omitempty"`
	IPFamilies          []string `json:"ipFamilies,omitempty"`
	IPFamilyPolicy      string   `json:"ipFamilyPolicy,omitempty"`
	NodePorts           []int32  `json:"nodePorts,omitempty"`
	HealthCheckNodePort int32    `json:"healthCheckNodePort,omitempty"`
}

// divergence is one disagreement.
type divergence struct {
	Release  string `json:"release"`
	Scenario string `json:"scenario"`
	Index    int    `json:"index"`
	Object   string `json:"object"`
	Kind     string `json:"kind"` // outcome, errors, warnings, addresses, op, profile, harness
	Svclab   any    `json:"svclab"`
	Upstream any    `json:"upstream"`
}

func main() {
	releases := flag.String("releases", "v1.37.2", "comma-separated Kubernetes releases (v1.37.2,...)")
	scenariosDir := flag.String("scenarios", "testdata", "directory of scenario files (*.json)")
	only := flag.String("only", "", "run only scenarios whose id contains this")
	svclab := flag.String("svclab", "/work/wt-svclab-bin/target/debug/svclab", "svclab binary")
	svclabArgs := flag.String("svclab-args", "", "extra arguments for `svclab check` (space-separated)")
	bindir := flag.String("bindir", ".work/bin", "where build.sh puts the oracle binaries")
	outDir := flag.String("out", "out", "where the oracle's and svclab's outputs are kept")
	exactPicks := flag.Bool("exact-picks", false, "compare dynamically picked ClusterIPs and NodePorts too (svclab in first-fit mode)")
	jsonOut := flag.String("json", "", "write the divergences as JSON to this file")
	verbose := flag.Bool("v", false, "print every scenario's verdict")
	flag.BoolVar(&selfTest, "selftest", false, "also check that a deliberately wrong svclab answer (one word of a message, one address) is reported")
	flag.Parse()

	scenarios, err := readScenarios(*scenariosDir, *only)
	if err != nil {
		fatal(err)
	}
	var all []divergence
	summary := []string{}
	for _, rel := range strings.Split(*releases, ",") {
		rel = strings.TrimSpace(rel)
		if !strings.HasPrefix(rel, "v") {
			rel = "v" + rel
		}
		divs, line, err := runRelease(rel, scenarios, *svclab, strings.Fields(*svclabArgs), *bindir, *outDir, *exactPicks, *verbose)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", rel, err)
			summary = append(summary, fmt.Sprintf("%s: ERROR %v", rel, err))
			continue
		}
		summary = append(summary, line)
		all = append(all, divs...)
	}
	if selfTest {
		fmt.Printf("selftest: %d wrong answers planted, %d not reported\n", selfTried, len(selfMissed))
		for _, m := range selfMissed {
			fmt.Println("   missed:", m)
		}
		if len(selfMissed) > 0 {
			defer os.Exit(3)
		}
	}
	printDivergences(all)
	real := 0
	for _, d := range all {
		if counted(d.Kind) {
			real++
		}
	}
	fmt.Println()
	for _, s := range summary {
		fmt.Println(s)
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(all, "", "  ")
		os.WriteFile(*jsonOut, append(b, '\n'), 0o644)
	}
	if real > 0 {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}

func readScenarios(dir, only string) ([]scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []scenario
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var s scenario
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		if s.ID == "" {
			s.ID = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		if only != "" && !strings.Contains(s.ID, only) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

func minorOf(v string) int {
	v = strings.TrimPrefix(v, "v")
	var maj, min int
	fmt.Sscanf(v, "%d.%d", &maj, &min)
	return min
}

// atRelease returns the scenario's objects with every ClusterProfile's kubernetesVersion set
// to rel (a ClusterProfile is appended when there is none), and whether the scenario applies.
// With exactPicks every ClusterProfile also gets `dynamicPicks: FirstFit`, svclab's first-fit
// mode (the picks the oracle makes); the oracle ignores the field.
func atRelease(s scenario, rel string, exactPicks bool) ([]json.RawMessage, bool) {
	minor := minorOf(rel)
	if (s.MinMinor != 0 && minor < s.MinMinor) || (s.MaxMinor != 0 && minor > s.MaxMinor) {
		return nil, false
	}
	version := strings.TrimPrefix(rel, "v")
	out := make([]json.RawMessage, 0, len(s.Objects)+1)
	found := false
	for _, raw := range s.Objects {
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil && m["apiVersion"] == "svclab.dev/v1alpha1" && m["kind"] == "ClusterProfile" {
			if v, ok := m["kubernetesVersion"].(string); ok && v != "" && minorOf(v) != minor {
				return nil, false // pinned to another release
			}
			m["kubernetesVersion"] = version
			if exactPicks {
				m["dynamicPicks"] = "FirstFit"
			}
			found = true
			b, _ := json.Marshal(m)
			raw = b
		}
		out = append(out, raw)
	}
	if !found {
		profile := map[string]any{"apiVersion": "svclab.dev/v1alpha1", "kind": "ClusterProfile", "kubernetesVersion": version}
		if exactPicks {
			profile["dynamicPicks"] = "FirstFit"
		}
		b, _ := json.Marshal(profile)
		out = append(out, b)
	}
	return out, true
}

func runRelease(rel string, scenarios []scenario, svclab string, svclabArgs []string, bindir, outDir string, exactPicks, verbose bool) ([]divergence, string, error) {
	bin, err := buildOracle(rel, bindir)
	if err != nil {
		return nil, "", err
	}
	dir := filepath.Join(outDir, rel)
	os.MkdirAll(dir, 0o755)
	type item struct {
		s       scenario
		objects []json.RawMessage
	}
	var items []item
	var batch bytes.Buffer
	for _, s := range scenarios {
		objs, ok := atRelease(s, rel, exactPicks)
		if !ok {
			continue
		}
		items = append(items, item{s, objs})
		b, _ := json.Marshal(map[string]any{"id": s.ID, "objects": objs})
		batch.Write(b)
		batch.WriteByte('\n')
	}
	casesPath := filepath.Join(dir, "cases.jsonl")
	resultsPath := filepath.Join(dir, "oracle.jsonl")
	if err := os.WriteFile(casesPath, batch.Bytes(), 0o644); err != nil {
		return nil, "", err
	}
	cmd := exec.Command(bin, "-test.run", "^TestOracle$")
	cmd.Env = append(os.Environ(), "ORACLE_CASES="+casesPath, "ORACLE_OUT="+resultsPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("oracle: %v\n%s", err, tail(stderr.String(), 40))
	}
	speed := strings.TrimSpace(lastLine(stderr.String(), "oracle "))
	results := map[string]oracleCase{}
	f, err := os.Open(resultsPath)
	if err != nil {
		return nil, "", err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		var c oracleCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			f.Close()
			return nil, "", err
		}
		results[c.ID] = c
	}
	f.Close()

	var divs []divergence
	agree, realTotal := 0, 0
	for _, it := range items {
		oc, ok := results[it.s.ID]
		if !ok {
			return nil, "", fmt.Errorf("oracle gave no answer for %s", it.s.ID)
		}
		rep, err := runSvclab(svclab, svclabArgs, filepath.Join(dir, it.s.ID+".yaml"), it.objects)
		if err != nil {
			return nil, "", fmt.Errorf("svclab on %s: %v", it.s.ID, err)
		}
		d := compareCase(rel, it.s.ID, it.objects, oc, rep, exactPicks)
		if selfTest {
			for _, m := range mutations(rep, it.objects, exactPicks) {
				md := compareCase(rel, it.s.ID, it.objects, oc, m.report, exactPicks)
				if countReal(md) < countReal(d) || show(md) == show(d) {
					selfMissed = append(selfMissed, fmt.Sprintf("%s %s: %s", rel, it.s.ID, m.what))
				}
				selfTried++
			}
		}
		real := countReal(d)
		if real == 0 {
			agree++
		}
		if verbose {
			verdict := "agree"
			if real > 0 {
				verdict = fmt.Sprintf("%d divergences", real)
			}
			note := ""
			if len(oc.Notes) > 0 {
				note = " (notes: " + strings.Join(oc.Notes, "; ") + ")"
			}
			fmt.Printf("%s %-40s %s%s\n", rel, it.s.ID, verdict, note)
		}
		divs = append(divs, d...)
		realTotal += real
	}
	line := fmt.Sprintf("%s: %d scenarios, %d agree, %d divergences [%s]", rel, len(items), agree, realTotal, speed)
	return divs, line, nil
}

func buildOracle(rel, bindir string) (string, error) {
	cmd := exec.Command("./build.sh", rel, bindir)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build.sh %s: %v\n%s", rel, err, tail(stderr.String(), 60))
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		fmt.Fprintln(os.Stderr, s)
	}
	return strings.TrimSpace(out.String()), nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func lastLine(s, prefix string) string {
	out := ""
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = l
		}
	}
	return out
}

// runSvclab writes the objects one per YAML document (document i is object i) and runs
// `svclab --engine native check --output json` on them. Each object is written as the oracle
// gets it, compacted with its keys in their order: the order of unknown-field warnings is the
// order of the fields in the document (a map decoded and marshalled again would sort them).
func runSvclab(svclab string, extra []string, path string, objects []json.RawMessage) (*report, error) {
	var b bytes.Buffer
	for i, o := range objects {
		if i > 0 {
			b.WriteString("---\n")
		}
		if err := json.Compact(&b, o); err != nil {
			return nil, fmt.Errorf("object %d: %v", i, err)
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return nil, err
	}
	args := append([]string{"--engine", "native", "check", "--output", "json"}, extra...)
	args = append(args, path)
	cmd := exec.Command(svclab, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	_ = cmd.Run() // exits non-zero when the scenario has errors
	if out.Len() == 0 {
		return nil, fmt.Errorf("no report: %s", stderr.String())
	}
	os.WriteFile(strings.TrimSuffix(path, ".yaml")+".svclab.json", out.Bytes(), 0o644)
	var r report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// head is what the comparison reads of an input object.
type head struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name         string            `json:"name"`
		GenerateName string            `json:"generateName"`
		Namespace    string            `json:"namespace"`
		Annotations  map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		ClusterIP           string   `json:"clusterIP"`
		ClusterIPs          []string `json:"clusterIPs"`
		HealthCheckNodePort int32    `json:"healthCheckNodePort"`
		Ports               []struct {
			NodePort int32 `json:"nodePort"`
		} `json:"ports"`
	} `json:"spec"`
}

func (h head) kindOf() string {
	switch {
	case h.APIVersion == "v1" && h.Kind == "Service":
		return "Service"
	case h.APIVersion == "discovery.k8s.io/v1" && h.Kind == "EndpointSlice":
		return "EndpointSlice"
	case strings.HasPrefix(h.APIVersion, "networking.k8s.io/") && h.Kind == "ServiceCIDR":
		return "ServiceCIDR"
	}
	return ""
}

// compareCase compares one scenario's answers.
func compareCase(rel, id string, objects []json.RawMessage, oc oracleCase, rep *report, exactPicks bool) []divergence {
	var divs []divergence
	add := func(index int, object, kind string, svclab, upstream any) {
		divs = append(divs, divergence{Release: rel, Scenario: id, Index: index, Object: object, Kind: kind, Svclab: svclab, Upstream: upstream})
	}
	// Case-level: feature gates svclab and kube-apiserver refuse.
	var upstreamProfile, svclabProfile []string
	if oc.Error != nil {
		for _, e := range strings.Split(*oc.Error, "; ") {
			if strings.HasPrefix(e, "featureGates: ") {
				upstreamProfile = append(upstreamProfile, e)
			} else {
				add(-1, "case", "harness", nil, e)
			}
		}
	}
	for _, d := range rep.Diagnostics {
		if d.Object != nil && d.Object.Kind == "ClusterProfile" && d.Severity == "error" {
			svclabProfile = append(svclabProfile, d.Message)
		}
	}
	sort.Strings(upstreamProfile)
	sort.Strings(svclabProfile)
	if !reflect.DeepEqual(nonNil(upstreamProfile), nonNil(svclabProfile)) {
		add(-1, "ClusterProfile", "profile", svclabProfile, upstreamProfile)
	}
	if oc.Error != nil && !strings.HasPrefix(*oc.Error, "featureGates: ") && len(oc.Results) == 0 {
		return divs
	}

	heads := make([]head, len(objects))
	for i, raw := range objects {
		json.Unmarshal(raw, &heads[i])
	}
	upstream := map[int]oracleResult{}
	for _, r := range oc.Results {
		upstream[r.Index] = r
	}
	services := map[int]serviceReport{}
	for _, s := range rep.Services {
		if s.Source != nil {
			services[s.Source.Document] = s
		}
	}
	diagsAt := map[int][]diagnostic{}
	for _, d := range rep.Diagnostics {
		if d.Source != nil && d.Object != nil {
			diagsAt[d.Source.Document] = append(diagsAt[d.Source.Document], d)
		}
	}
	stored := map[string]bool{} // what svclab holds, to name its operations
	for i, h := range heads {
		kind := h.kindOf()
		if kind == "" {
			continue
		}
		ns := h.Metadata.Namespace
		if ns == "" && kind != "ServiceCIDR" {
			ns = "default"
		}
		objName := kind + " " + ns + "/" + h.Metadata.Name
		if kind == "ServiceCIDR" {
			objName = kind + " " + h.Metadata.Name
		}
		key := kind + "/" + ns + "/" + h.Metadata.Name
		op := "create"
		if kind == "Service" && h.Metadata.Annotations["svclab.dev/operation"] == "delete" {
			op = "delete"
		} else if h.Metadata.Name != "" && stored[key] {
			op = "update"
		}
		// svclab's answer.
		s := answer{Kind: kind, Namespace: ns, Name: h.Metadata.Name, Op: op, Errors: []string{}, Warnings: []string{}}
		for _, d := range diagsAt[i] {
			if d.Object.Kind != kind {
				continue
			}
			switch {
			case d.Severity == "error" && strings.Contains(d.Message, " cannot be handled as a "):
				// The decoder's refusal: svclab reports it at the field, the apiserver as a
				// 400 BadRequest with the decoder's text.
				s.Errors = append(s.Errors, "BadRequest : "+d.Message)
			case d.Severity == "error":
				s.Errors = append(s.Errors, d.Reason+" "+d.Field+": "+strings.TrimPrefix(d.Message, d.Field+": "))
			case d.Severity == "warning" && (d.Reason == "Warning" || d.Reason == "UnknownField"):
				s.Warnings = append(s.Warnings, d.Message)
			}
		}
		if kind == "Service" {
			sr, ok := services[i]
			if !ok {
				s.Outcome = "(no report)"
				if len(s.Errors) > 0 {
					s.Outcome = "rejected" // refused before the registry (decoding)
				}
			} else {
				s.Outcome = sr.Outcome
				s.Name, s.Namespace = sr.Name, sr.Namespace
				if sr.Outcome != "rejected" {
					s.Type, s.ClusterIPs, s.IPFamilies, s.IPFamilyPolicy, s.HealthCheckNodePort = sr.Type, sr.ClusterIPs, sr.IPFamilies, sr.IPFamilyPolicy, sr.HealthCheckNodePort
					for _, p := range sr.Ports {
						s.NodePorts = append(s.NodePorts, p.NodePort)
					}
				}
			}
		} else if kind == "ServiceCIDR" {
			s.Op = "create"
			if stored[key] {
				s.Op = "update"
			}
			s.Outcome = map[string]string{"create": "created", "update": "updated"}[s.Op]
			if len(s.Errors) > 0 {
				s.Outcome = "rejected"
			}
		} else {
			s.Outcome = map[string]string{"create": "created", "update": "updated"}[op]
			if len(s.Errors) > 0 {
				s.Outcome = "rejected"
			}
		}
		switch s.Outcome {
		case "created", "updated":
			stored[key] = true
		case "deleted":
			delete(stored, key)
		}

		// upstream's answer.
		r, ok := upstream[i]
		if !ok {
			if kind == "ServiceCIDR" && len(s.Errors) == 0 {
				continue // the IPAddress allocator is off: both ignore it
			}
			add(i, objName, "harness", s, "(no answer)")
			continue
		}
		u := answer{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Op: r.Op, Outcome: r.Outcome, Errors: []string{}, Warnings: r.Warnings}
		if u.Warnings == nil {
			u.Warnings = []string{}
		}
		if r.Status != nil {
			if r.Status.Reason == "Invalid" && len(r.Status.Causes) > 0 {
				for _, c := range r.Status.Causes {
					u.Errors = append(u.Errors, c.Reason+" "+c.Field+": "+c.Message)
				}
			} else {
				reason := r.Status.Reason
				if reason == "" {
					reason = "Unknown"
				}
				u.Errors = append(u.Errors, reason+" : "+r.Status.Message)
			}
		}
		if kind == "Service" && (r.Outcome == "created" || r.Outcome == "updated" || r.Outcome == "deleted") {
			u.Type, u.ClusterIPs, u.IPFamilies, u.IPFamilyPolicy, u.NodePorts, u.HealthCheckNodePort = r.Type, r.ClusterIPs, r.IPFamilies, r.IPFamilyPolicy, r.NodePorts, r.HealthCheckNodePort
		}

		if s.Op != u.Op {
			add(i, objName, "op", s.Op, u.Op)
		}
		if s.Outcome != u.Outcome {
			add(i, objName, "outcome", s.Outcome+" "+strings.Join(s.Errors, " | "), u.Outcome+" "+strings.Join(u.Errors, " | "))
			continue
		}
		if !reflect.DeepEqual(s.Errors, u.Errors) {
			kind := "errors"
			masked := func(msgs []string) []string {
				return maskStorage(maskGeneratedName(msgs, h))
			}
			switch {
			case !exactPicks && reflect.DeepEqual(maskAddresses(s.Errors), maskAddresses(u.Errors)):
				// Only addresses differ: values picked dynamically (svclab at random,
				// the oracle first-fit) and quoted in a message.
				kind = "dynamic-values"
			case reflect.DeepEqual(masked(s.Errors), masked(u.Errors)):
				// Only what upstream draws at random differs: a generated name's suffix, a
				// stored object's uid, the oracle's etcd key prefix.
				kind = "dynamic-values"
			case sameUpToMapOrder(s.Errors, u.Errors):
				// The same errors of one field in another order: upstream iterates a Go map
				// (labels, annotations, selector keys), whose order is random.
				kind = "map-order"
			}
			add(i, objName, kind, s.Errors, u.Errors)
		}
		if !reflect.DeepEqual(s.Warnings, u.Warnings) {
			add(i, objName, "warnings", s.Warnings, u.Warnings)
		}
		if kind == "Service" && u.Outcome != "rejected" {
			sv, uv := comparable(h, s, exactPicks), comparable(h, u, exactPicks)
			if !reflect.DeepEqual(sv, uv) {
				kind := "addresses"
				if exactPicks && len(oc.Notes) > 0 && reflect.DeepEqual(comparable(h, s, false), comparable(h, u, false)) {
					// The case's notes say a family has several ServiceCIDR allocators: which
					// one a dynamic pick comes from follows Go's map order upstream, so only
					// the picks' families are comparable.
					kind = "dynamic-values"
				}
				add(i, objName, kind, sv, uv)
			}
		}
	}
	return divs
}

var (
	selfTest   bool
	selfTried  int
	selfMissed []string
)

// counted says whether a divergence kind counts: dynamic values and Go map order are upstream's
// randomness, not svclab's error.
func counted(kind string) bool {
	return kind != "dynamic-values" && kind != "map-order"
}

func countReal(d []divergence) int {
	n := 0
	for _, x := range d {
		if counted(x.Kind) {
			n++
		}
	}
	return n
}

var (
	uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	keyPattern  = regexp.MustCompile(`Key: [^,]*,`)
)

// maskStorage replaces what the storage layer draws or lays out per installation in messages:
// uids (random at create) and etcd keys (the oracle keeps each case under its own prefix).
func maskStorage(msgs []string) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		m = uuidPattern.ReplaceAllString(m, "<uid>")
		out[i] = keyPattern.ReplaceAllString(m, "Key: <key>,")
	}
	return out
}

// maskGeneratedName replaces the random five characters names.SimpleNameGenerator appends to
// an object's generateName.
func maskGeneratedName(msgs []string, h head) []string {
	if h.Metadata.Name != "" || h.Metadata.GenerateName == "" {
		return msgs
	}
	pattern := regexp.MustCompile(regexp.QuoteMeta(h.Metadata.GenerateName) + `[bcdfghjklmnpqrstvwxz2456789]{5}`)
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = pattern.ReplaceAllString(m, h.Metadata.GenerateName+"<5>")
	}
	return out
}

// sameUpToMapOrder says whether two error lists name the same fields in the same sequence and
// differ only in the order of errors within a run of one field.
func sameUpToMapOrder(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	field := func(e string) string {
		// "<reason> <field>: <body>"
		rest := e[strings.Index(e, " ")+1:]
		if j := strings.Index(rest, ": "); j >= 0 {
			return rest[:j]
		}
		return rest
	}
	for i := 0; i < len(a); {
		j := i
		for j < len(a) && field(a[j]) == field(a[i]) {
			j++
		}
		for k := i; k < j; k++ {
			if field(b[k]) != field(a[i]) {
				return false
			}
		}
		x := append([]string(nil), a[i:j]...)
		y := append([]string(nil), b[i:j]...)
		sort.Strings(x)
		sort.Strings(y)
		if !reflect.DeepEqual(x, y) {
			return false
		}
		i = j
	}
	return true
}

type mutation struct {
	what   string
	report *report
}

// mutations are wrong copies of svclab's report: one word of a message changed, and one address
// the comparison reads exactly (a requested ClusterIP, else a requested NodePort) changed.
func mutations(rep *report, objects []json.RawMessage, exactPicks bool) []mutation {
	clone := func() *report {
		b, _ := json.Marshal(rep)
		var r report
		json.Unmarshal(b, &r)
		return &r
	}
	var out []mutation
	for i, d := range rep.Diagnostics {
		if d.Object == nil || d.Source == nil || (d.Severity != "error" && !(d.Severity == "warning" && (d.Reason == "Warning" || d.Reason == "UnknownField"))) {
			continue
		}
		if d.Object.Kind == "ClusterProfile" {
			continue
		}
		words := strings.Fields(d.Message)
		if len(words) < 2 {
			continue
		}
		r := clone()
		words[len(words)-1] = words[len(words)-1] + "x"
		r.Diagnostics[i].Message = strings.Join(words, " ")
		out = append(out, mutation{"one word of diagnostic " + fmt.Sprint(i) + ": " + d.Message, r})
		break
	}
	for i, sr := range rep.Services {
		if sr.Outcome == "rejected" || sr.Source == nil || sr.Source.Document >= len(objects) {
			continue
		}
		var h head
		json.Unmarshal(objects[sr.Source.Document], &h)
		for j, ip := range sr.ClusterIPs {
			if ip == "None" || (!exactPicks && ip != h.Spec.ClusterIP && !contains(h.Spec.ClusterIPs, ip)) {
				continue
			}
			r := clone()
			r.Services[i].ClusterIPs[j] = shiftAddress(ip)
			return append(out, mutation{"ClusterIP " + ip + " of " + sr.Name, r})
		}
		for j, p := range sr.Ports {
			if p.NodePort == 0 || (!exactPicks && (j >= len(h.Spec.Ports) || h.Spec.Ports[j].NodePort != p.NodePort)) {
				continue
			}
			r := clone()
			r.Services[i].Ports[j].NodePort++
			return append(out, mutation{"NodePort " + fmt.Sprint(p.NodePort) + " of " + sr.Name, r})
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// shiftAddress changes the last digit of an address.
func shiftAddress(ip string) string {
	last := ip[len(ip)-1]
	switch {
	case last == '9':
		return ip[:len(ip)-1] + "8"
	case last >= '0' && last < '9':
		return ip[:len(ip)-1] + string(last+1)
	}
	return ip + "1"
}

var addressPattern = regexp.MustCompile(`\b[0-9]{1,3}(\.[0-9]{1,3}){3}\b|\b[0-9a-fA-F]{0,4}(:[0-9a-fA-F]{0,4}){2,7}\b`)

// maskAddresses replaces IP addresses in messages.
func maskAddresses(msgs []string) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = addressPattern.ReplaceAllString(m, "<ip>")
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// comparable is what of a Service's addresses is compared: everything with exactPicks,
// otherwise the type, families, policy and the values the document asked for, with dynamic
// picks reduced to "picked" (a ClusterIP's family, a NodePort's presence).
func comparable(h head, a answer, exactPicks bool) map[string]any {
	out := map[string]any{
		"type":           a.Type,
		"ipFamilies":     nonNil(a.IPFamilies),
		"ipFamilyPolicy": a.IPFamilyPolicy,
	}
	requested := map[string]bool{}
	if h.Spec.ClusterIP != "" {
		requested[h.Spec.ClusterIP] = true
	}
	for _, ip := range h.Spec.ClusterIPs {
		requested[ip] = true
	}
	ips := []string{}
	for _, ip := range a.ClusterIPs {
		switch {
		case exactPicks || requested[ip] || ip == "None":
			ips = append(ips, ip)
		case strings.Contains(ip, ":"):
			ips = append(ips, "(dynamic IPv6)")
		default:
			ips = append(ips, "(dynamic IPv4)")
		}
	}
	out["clusterIPs"] = ips
	ports := []string{}
	for j, p := range a.NodePorts {
		asked := int32(0)
		if j < len(h.Spec.Ports) {
			asked = h.Spec.Ports[j].NodePort
		}
		switch {
		case exactPicks || p == 0 || p == asked:
			ports = append(ports, fmt.Sprint(p))
		default:
			ports = append(ports, "(dynamic)")
		}
	}
	out["nodePorts"] = ports
	hc := fmt.Sprint(a.HealthCheckNodePort)
	if !exactPicks && a.HealthCheckNodePort != 0 && a.HealthCheckNodePort != h.Spec.HealthCheckNodePort {
		hc = "(dynamic)"
	}
	out["healthCheckNodePort"] = hc
	return out
}

func printDivergences(divs []divergence) {
	byKind := map[string][]divergence{}
	for _, d := range divs {
		byKind[d.Kind] = append(byKind[d.Kind], d)
	}
	for _, k := range sortedKeys(byKind) {
		fmt.Printf("== %s: %d\n", k, len(byKind[k]))
		for _, d := range byKind[k] {
			fmt.Printf("-- %s %s #%d %s\n", d.Release, d.Scenario, d.Index, d.Object)
			fmt.Printf("   svclab:   %s\n", show(d.Svclab))
			fmt.Printf("   upstream: %s\n", show(d.Upstream))
		}
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
