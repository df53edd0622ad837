package oracle

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	netutils "k8s.io/utils/net"
)

// profile is the cluster a case describes: svclab's ClusterProfile (the last one in the stream
// wins, as in svclab), with kube-apiserver's defaults for what it leaves out.
type profile struct {
	version string // kubernetesVersion as written
	minor   int    // its minor, 0 when not given
	gates   map[string]bool
	// ranges are --service-cluster-ip-range, primary first.
	ranges []*net.IPNet
	// nodePorts is --service-node-port-range.
	nodePorts utilnet.PortRange
}

type profileDoc struct {
	KubernetesVersion      json.RawMessage `json:"kubernetesVersion"`
	FeatureGates           map[string]bool `json:"featureGates"`
	ServiceClusterIPRanges json.RawMessage `json:"serviceClusterIPRanges"`
	ServiceNodePortRange   string          `json:"serviceNodePortRange"`
}

// readProfile reads the case's ClusterProfile. The ranges are checked the way kube-apiserver
// checks its flags (an invalid one would stop it from starting), after the gates are known.
func readProfile(raws []json.RawMessage, heads []objectHead) (*profile, error) {
	p := &profile{gates: map[string]bool{}}
	var doc profileDoc
	for i := len(heads) - 1; i >= 0; i-- {
		if heads[i].isProfile() {
			if err := json.Unmarshal(raws[i], &doc); err != nil {
				return nil, fmt.Errorf("oracle: ClusterProfile: %v", err)
			}
			break
		}
	}
	if len(doc.KubernetesVersion) > 0 && string(doc.KubernetesVersion) != "null" {
		var s string
		if err := json.Unmarshal(doc.KubernetesVersion, &s); err != nil {
			s = string(doc.KubernetesVersion) // a number, e.g. 1.30 written unquoted
		}
		p.version = s
		p.minor = releaseMinor(s)
		if p.minor == 0 {
			return nil, fmt.Errorf("oracle: kubernetesVersion %q is not a Kubernetes 1.x version", s)
		}
	}
	for k, v := range doc.FeatureGates {
		p.gates[k] = v
	}
	texts := []string{"10.96.0.0/12"}
	if len(doc.ServiceClusterIPRanges) > 0 && string(doc.ServiceClusterIPRanges) != "null" {
		var list []string
		if err := json.Unmarshal(doc.ServiceClusterIPRanges, &list); err != nil {
			var s string
			if err := json.Unmarshal(doc.ServiceClusterIPRanges, &s); err != nil {
				return nil, fmt.Errorf("oracle: serviceClusterIPRanges must be a list or a string")
			}
			list = strings.Split(s, ",")
		}
		texts = list
	}
	for _, text := range texts {
		_, cidr, err := netutils.ParseCIDRSloppy(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("oracle: serviceClusterIPRanges: invalid CIDR address: %s", text)
		}
		p.ranges = append(p.ranges, cidr)
	}
	if len(p.ranges) == 0 || len(p.ranges) > 2 {
		return nil, fmt.Errorf("oracle: serviceClusterIPRanges: one or two ranges, got %d", len(p.ranges))
	}
	if len(p.ranges) == 2 && netutils.IsIPv6CIDR(p.ranges[0]) == netutils.IsIPv6CIDR(p.ranges[1]) {
		return nil, fmt.Errorf("oracle: serviceClusterIPRanges: the two ranges must be of different IP families")
	}
	portText := doc.ServiceNodePortRange
	if portText == "" {
		portText = "30000-32767"
	}
	pr, err := utilnet.ParsePortRange(portText)
	if err != nil {
		return nil, fmt.Errorf("oracle: serviceNodePortRange: %v", err)
	}
	p.nodePorts = *pr
	return p, nil
}

// checkRangeSizes refuses what kube-apiserver's flag validation refuses for a bitmap range
// (more than 20 host bits), once the gates say whether a bitmap is kept.
func checkRangeSizes(p *profile) error {
	if isEnabled("MultiCIDRServiceAllocator") && isEnabled("DisableAllocatorDualWrite") {
		return nil
	}
	for _, r := range p.ranges {
		ones, bits := r.Mask.Size()
		if bits-ones > 20 {
			return fmt.Errorf("oracle: serviceClusterIPRanges: %s is too large for the bitmap allocator (more than 20 host bits)", r)
		}
	}
	return nil
}

// releaseMinor is the minor of "1.33", "v1.33.2", "1.33.7" (0 when it is none of those).
func releaseMinor(v string) int {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.Split(v, ".")
	if len(parts) < 2 || parts[0] != "1" {
		return 0
	}
	m, err := strconv.Atoi(parts[1])
	if err != nil {
		return 0
	}
	return m
}

// pristineGate is the binary's feature gate before any case touched it.
var pristineGate = utilfeature.DefaultMutableFeatureGate.DeepCopy()

// applyGates gives the case its own kube-apiserver feature gate: a copy of the pristine gate,
// with the case's gates set one at a time in name order through SetFromMap (each on a copy
// that is kept only when SetFromMap accepts it). A refusal (unknown gate, locked gate, missing
// dependency) is reported and leaves that gate at its default, as svclab does. The copy becomes
// utilfeature.DefaultMutableFeatureGate and DefaultFeatureGate, which the registry, validation
// and allocators read at call time. (Setting gates on the shared object instead would let a
// refused gate of one case poison every later SetFromMap: from 1.31 the versioned gate keeps
// every name it was given and checks them all again on each call.)
func applyGates(m map[string]bool) []string {
	current := pristineGate.DeepCopy()
	var errs []string
	for _, k := range sortedKeys(m) {
		trial := current.DeepCopy()
		if err := trial.SetFromMap(map[string]bool{k: m[k]}); err != nil {
			errs = append(errs, fmt.Sprintf("featureGates: %v", err))
			continue
		}
		current = trial
	}
	utilfeature.DefaultMutableFeatureGate = current
	utilfeature.DefaultFeatureGate = current
	return errs
}

// knownGates are the gates this release has (GetAll copies the whole table: read it once).
var knownGates = func() map[featuregate.Feature]bool {
	known := map[featuregate.Feature]bool{}
	for f := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		known[f] = true
	}
	return known
}()

// isEnabled is a gate's value, false for a gate this release does not know.
func isEnabled(name string) bool {
	f := featuregate.Feature(name)
	if !knownGates[f] {
		return false
	}
	return utilfeature.DefaultFeatureGate.Enabled(f)
}

// isKnown says whether this release has the gate.
func isKnown(name string) bool {
	return knownGates[featuregate.Feature(name)]
}

// serverSideFieldValidation says whether the handlers decode strictly and turn unknown fields
// into warnings (fieldValidation=Warn when the client names none): behind the
// ServerSideFieldValidation gate until it went away, always after.
func serverSideFieldValidation() bool {
	if isKnown("ServerSideFieldValidation") {
		return isEnabled("ServerSideFieldValidation")
	}
	return true
}
