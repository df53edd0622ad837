//go:build !oracle_ipaddress

// Before 1.33 the IPAddress allocator (MultiCIDRServiceAllocator, alpha from 1.27, beta from
// 1.31) runs over the networking.k8s.io/v1alpha1 or v1beta1 API; the oracle does not build it
// there, and says so for a case that turns the gate on.

package oracle

import (
	"encoding/json"
	"fmt"
)

func newIPAddressAllocators(h *harness, prefix string, p *profile, raws []json.RawMessage, heads []objectHead, cidrResults map[int]*objectResult, a *allocators) ([]string, error) {
	return nil, fmt.Errorf("oracle: MultiCIDRServiceAllocator before 1.33 (networking.k8s.io/v1alpha1, v1beta1) is not built by the oracle")
}
