package oracle

import (
	"encoding/json"
	"fmt"
	"net"
	"reflect"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/service/allocator"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	"k8s.io/kubernetes/pkg/registry/core/service/portallocator"
)

// allocators are one case's ClusterIP and NodePort allocators, built as kube-apiserver builds
// them (pkg/registry/core/rest/storage_core.go: ipallocator.New and portallocator.New over
// allocator.NewAllocationMap[WithOffset]; from MultiCIDRServiceAllocator the MetaAllocator over
// ServiceCIDR and IPAddress objects), kept in memory instead of etcd.
type allocators struct {
	primary api.IPFamily
	ips     map[api.IPFamily]ipallocator.Interface
	ports   portallocator.Interface
	stop    []func()
}

func (a *allocators) destroy() {
	for _, ip := range a.ips {
		destroy(ip)
	}
	destroy(a.ports)
	for _, f := range a.stop {
		f()
	}
}

// destroy calls Destroy where the release has it (1.24's allocators have none).
func destroy(x any) {
	if d, ok := x.(interface{ Destroy() }); ok {
		d.Destroy()
	}
}

// newAllocators builds the case's allocators. ServiceCIDR objects get their results in
// cidrResults (by object index) when the IPAddress allocator is in use.
func newAllocators(h *harness, prefix string, p *profile, raws []json.RawMessage, heads []objectHead, cidrResults map[int]*objectResult) (*allocators, []string, error) {
	if err := checkRangeSizes(p); err != nil {
		return nil, nil, err
	}
	a := &allocators{primary: family(p.ranges[0]), ips: map[api.IPFamily]ipallocator.Interface{}}
	ports, err := newPortAllocator(p.nodePorts)
	if err != nil {
		return nil, nil, fmt.Errorf("oracle: cannot create the NodePort allocator: %v", err)
	}
	a.ports = ports
	if isEnabled("MultiCIDRServiceAllocator") {
		notes, err := newIPAddressAllocators(h, prefix, p, raws, heads, cidrResults, a)
		if err != nil {
			a.destroy()
			return nil, notes, err
		}
		return a, notes, nil
	}
	for _, cidr := range p.ranges {
		r, err := newBitmapAllocator(cidr)
		if err != nil {
			a.destroy()
			return nil, nil, fmt.Errorf("oracle: cannot create the cluster IP allocator for %s: %v", cidr, err)
		}
		a.ips[r.IPFamily()] = r
	}
	return a, nil, nil
}

func family(cidr *net.IPNet) api.IPFamily {
	if cidr.IP.To4() == nil {
		return api.IPv6Protocol
	}
	return api.IPv4Protocol
}

// newBitmapAllocator is the ClusterIP bitmap of one range: ipallocator.New with upstream's
// offset (KEP-3070, computed and gated inside ipallocator.New) and the bitmap upstream uses,
// picking first-fit instead of at random.
func newBitmapAllocator(cidr *net.IPNet) (*ipallocator.Range, error) {
	return ipallocator.New(cidr, func(max int, rangeSpec string, offset int) (allocator.Interface, error) {
		return &firstFit{Interface: allocator.NewAllocationMapWithOffset(max, rangeSpec, offset), max: max, offset: offset}, nil
	})
}

// newPortAllocator is the NodePort allocator: portallocator.New with the bitmap upstream uses,
// picking first-fit. The factory's type changed in 1.27 (KEP-3668 added the offset:
// AllocatorFactory before, AllocatorWithOffsetFactory after), so the factory is built to
// whichever type this release's portallocator.New takes.
func newPortAllocator(pr utilnet.PortRange) (portallocator.Interface, error) {
	fn := reflect.ValueOf(portallocator.New)
	factoryType := fn.Type().In(1)
	errType := reflect.TypeOf((*error)(nil)).Elem()
	ifaceType := reflect.TypeOf((*allocator.Interface)(nil)).Elem()
	factory := reflect.MakeFunc(factoryType, func(args []reflect.Value) []reflect.Value {
		max, spec := int(args[0].Int()), args[1].String()
		var inner allocator.Interface
		offset := 0
		if len(args) == 3 {
			offset = int(args[2].Int())
			inner = allocator.NewAllocationMapWithOffset(max, spec, offset)
		} else {
			inner = allocator.NewAllocationMap(max, spec)
		}
		var out allocator.Interface = &firstFit{Interface: inner, max: max, offset: offset}
		return []reflect.Value{reflect.ValueOf(&out).Elem().Convert(ifaceType), reflect.Zero(errType)}
	})
	res := fn.Call([]reflect.Value{reflect.ValueOf(pr), factory})
	if e, _ := res[1].Interface().(error); e != nil {
		return nil, e
	}
	return res[0].Interface().(portallocator.Interface), nil
}

// firstFit is the bitmap with deterministic picks. Upstream's random scan
// (allocator.randomScanStrategyWithOffset, randomScanStrategy) draws a start in the upper band
// [offset, max) and scans it ascending with wrap-around, then draws a start in the lower band
// [0, offset) and scans that; firstFit is that scan with every draw 0: the lowest free value at
// or above offset, else the lowest free value below it. Allocate, Release, Has, Free and
// ForEach are the bitmap's own. Where upstream's draw itself fails (rand.Intn panics when
// offset >= max, the 1.24 band offset on a /28 or /124), the bitmap's own AllocateNext runs, so
// the panic is upstream's.
type firstFit struct {
	allocator.Interface
	max, offset int
}

func (f *firstFit) AllocateNext() (int, bool, error) {
	if f.Interface.Free() <= 0 {
		return 0, false, nil
	}
	if f.offset >= f.max {
		return f.Interface.AllocateNext()
	}
	for i := f.offset; i < f.max; i++ {
		if ok, err := f.Interface.Allocate(i); err == nil && ok {
			return i, true, nil
		}
	}
	for i := 0; i < f.offset; i++ {
		if ok, err := f.Interface.Allocate(i); err == nil && ok {
			return i, true, nil
		}
	}
	return 0, false, nil
}
