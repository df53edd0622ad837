//go:build oracle_ipaddress

// The IPAddress allocator of KEP-1880 (MultiCIDRServiceAllocator) on the networking.k8s.io/v1
// API: 1.33 and later. build.sh sets the oracle_ipaddress tag for those releases.

package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sync"
	"time"
	"unsafe"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/networking"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	servicecidrstore "k8s.io/kubernetes/pkg/registry/networking/servicecidr/storage"
	netutils "k8s.io/utils/net"
)

// newIPAddressAllocators builds one MetaAllocator per family of --service-cluster-ip-range,
// as kube-apiserver does with MultiCIDRServiceAllocator, over a fake clientset whose IPAddress
// writes go straight into the informer's store (upstream's newTestAllocator approach). The
// ServiceCIDR objects are the default one the apiserver creates from its flags ("kubernetes")
// and the case's ServiceCIDR objects that the ServiceCIDR REST storage accepts.
func newIPAddressAllocators(h *harness, prefix string, p *profile, raws []json.RawMessage, heads []objectHead, cidrResults map[int]*objectResult, a *allocators) ([]string, error) {
	var notes []string
	defaultCIDR := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}}
	for _, r := range p.ranges {
		defaultCIDR.Spec.CIDRs = append(defaultCIDR.Spec.CIDRs, r.String())
	}
	byName := map[string]*networkingv1.ServiceCIDR{"kubernetes": defaultCIDR}
	order := []string{"kubernetes"}

	var cidrREST *servicecidrstore.REST
	defer func() {
		if cidrREST != nil {
			destroy(cidrREST)
		}
	}()
	const group, version, resource = "networking.k8s.io", "v1", "servicecidrs"
	for i, o := range heads {
		if !o.isServiceCIDR() {
			continue
		}
		if cidrREST == nil {
			var err error
			if cidrREST, _, err = servicecidrstore.NewREST(h.restOptions(prefix, group, resource)); err != nil {
				return nil, fmt.Errorf("oracle: servicecidr NewREST: %v", err)
			}
		}
		name := o.Metadata.Name
		res := &objectResult{Index: i, Kind: "ServiceCIDR", Name: name, Warnings: []string{}, Op: "create"}
		cidrResults[i] = res
		exists := false
		if name != "" {
			if _, err := cidrREST.Get(request("", "get", group, version, resource, name), name, &metav1.GetOptions{}); err == nil {
				exists = true
				res.Op = "update"
			}
		}
		obj, decodeWarnings, err := decode(raws[i], schema.GroupVersionKind{Group: group, Version: version, Kind: "ServiceCIDR"}, &networking.ServiceCIDR{})
		var out runtime.Object
		if err == nil {
			in := obj.(*networking.ServiceCIDR)
			if exists {
				res.Warnings, res.Panic = withWarnings(request("", "update", group, version, resource, name), func(ctx context.Context) {
					out, _, err = cidrREST.Update(ctx, name, rest.DefaultUpdatedObjectInfo(in), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
				})
			} else {
				res.Warnings, res.Panic = withWarnings(request("", "create", group, version, resource, ""), func(ctx context.Context) {
					out, err = cidrREST.Create(ctx, in, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
				})
			}
		}
		res.Warnings = append(decodeWarnings, res.Warnings...)
		if res.Warnings == nil {
			res.Warnings = []string{}
		}
		switch {
		case res.Panic != "":
			res.Outcome, res.Status = "rejected", panicStatus()
			continue
		case err != nil:
			res.Outcome, res.Status = "rejected", toStatus(err)
			continue
		}
		res.Outcome = map[string]string{"create": "created", "update": "updated"}[res.Op]
		stored := out.(*networking.ServiceCIDR)
		res.Name = stored.Name
		v1obj := &networkingv1.ServiceCIDR{}
		if err := legacyscheme.Scheme.Convert(stored, v1obj, nil); err != nil {
			return notes, fmt.Errorf("oracle: converting ServiceCIDR %s: %v", stored.Name, err)
		}
		v1obj.ResourceVersion = ""
		if _, seen := byName[v1obj.Name]; !seen {
			order = append(order, v1obj.Name)
		}
		byName[v1obj.Name] = v1obj
	}

	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	cidrInformer := factory.Networking().V1().ServiceCIDRs()
	ipInformer := factory.Networking().V1().IPAddresses()
	cidrInformer.Informer()
	ipStore := ipInformer.Informer().GetIndexer()
	// IPAddress objects live only in the informer's store: a create or delete is answered here
	// and never reaches the tracker, so no watch event can replay a stale state later and every
	// lookup of the allocators sees exactly the writes made so far.
	client.PrependReactor("create", "ipaddresses", func(action k8stesting.Action) (bool, runtime.Object, error) {
		ip := action.(k8stesting.CreateAction).GetObject().(*networkingv1.IPAddress)
		// What the IPAddress REST storage checks before it stores one
		// (pkg/registry/networking/ipaddress/strategy.go Validate): a Service without a
		// name gives an IPAddress without parentRef.name, refused ("is invalid:
		// spec.parentRef.name: Required value"), and the Service with it.
		internal := &networking.IPAddress{}
		if err := legacyscheme.Scheme.Convert(ip, internal, nil); err != nil {
			return true, nil, err
		}
		if errs := networkingvalidation.ValidateIPAddress(internal); len(errs) > 0 {
			return true, nil, apierrors.NewInvalid(networking.Kind("IPAddress"), ip.Name, errs)
		}
		if _, exists, _ := ipStore.GetByKey(ip.Name); exists {
			return true, nil, apierrors.NewAlreadyExists(networkingv1.Resource("ipaddresses"), ip.Name)
		}
		ip = ip.DeepCopy()
		ip.Generation = 1
		return true, ip, ipStore.Add(ip)
	})
	client.PrependReactor("delete", "ipaddresses", func(action k8stesting.Action) (bool, runtime.Object, error) {
		name := action.(k8stesting.DeleteAction).GetName()
		obj, exists, _ := ipStore.GetByKey(name)
		if !exists {
			return true, nil, apierrors.NewNotFound(networkingv1.Resource("ipaddresses"), name)
		}
		return true, nil, ipStore.Delete(obj)
	})
	ctx := context.Background()
	for _, name := range order {
		if _, err := client.NetworkingV1().ServiceCIDRs().Create(ctx, byName[name], metav1.CreateOptions{}); err != nil {
			return notes, fmt.Errorf("oracle: fake ServiceCIDR %s: %v", name, err)
		}
	}

	// The informers run and are synced before the MetaAllocators start: their run loop checks
	// for synced caches at once and otherwise only every 100ms.
	stopCh := make(chan struct{})
	a.stop = append(a.stop, func() { close(stopCh) })
	factory.Start(stopCh)
	for !cidrInformer.Informer().HasSynced() || !ipInformer.Informer().HasSynced() {
		time.Sleep(100 * time.Microsecond)
	}

	type pending struct {
		meta     *ipallocator.MetaAllocator
		expected int
		family   string
	}
	var metas []pending
	for _, r := range p.ranges {
		var bitmap ipallocator.Interface
		if !isEnabled("DisableAllocatorDualWrite") {
			b, err := newBitmapAllocator(r)
			if err != nil {
				return notes, fmt.Errorf("oracle: cannot create the dual-write bitmap for %s: %v", r, err)
			}
			bitmap = b
		}
		isIPv6 := netutils.IsIPv6CIDR(r)
		meta, err := ipallocator.NewMetaAllocator(client.NetworkingV1(), cidrInformer, ipInformer, isIPv6, bitmap)
		if err != nil {
			return notes, fmt.Errorf("oracle: NewMetaAllocator: %v", err)
		}
		a.ips[family(r)] = meta
		// The allocators the MetaAllocator will make: one per distinct CIDR of its family that
		// NewIPAllocator accepts.
		distinct := map[string]bool{}
		for _, name := range order {
			for _, c := range byName[name].Spec.CIDRs {
				_, n, err := netutils.ParseCIDRSloppy(c)
				if err != nil || netutils.IsIPv6CIDR(n) != isIPv6 || distinct[c] {
					continue
				}
				if _, err := ipallocator.NewIPAllocator(n, client.NetworkingV1(), ipInformer); err != nil {
					continue
				}
				distinct[c] = true
			}
		}
		fam := "IPv4"
		if isIPv6 {
			fam = "IPv6"
		}
		metas = append(metas, pending{meta: meta, expected: len(distinct), family: fam})
		if len(distinct) > 1 {
			notes = append(notes, fmt.Sprintf("%s has %d ServiceCIDR allocators: which one a dynamic pick comes from follows Go's map order", fam, len(distinct)))
		}
	}

	deadline := time.Now().Add(10 * time.Second)
	for _, m := range metas {
		for {
			n, err := deterministicAllocators(m.meta)
			if err != nil {
				return notes, err
			}
			if n >= m.expected {
				break
			}
			if time.Now().After(deadline) {
				return notes, fmt.Errorf("oracle: the %s MetaAllocator made %d of %d allocators", m.family, n, m.expected)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return notes, nil
}

// zeroSource makes every draw of a math/rand.Rand 0.
type zeroSource struct{}

func (zeroSource) Int63() int64 { return 0 }
func (zeroSource) Seed(int64)   {}

// deterministicAllocators gives every IPAddress allocator the MetaAllocator has made so far a
// random source that always draws 0, and returns how many there are. Upstream's
// allocateNextService draws the start of its scan of the upper band [offset, last] and, when
// that band is full, of the lower band [first, offset); with every draw 0 it takes the lowest
// free address at or above the offset address, else the lowest free address below it: the same
// first-fit rule as the bitmap's. The allocators and their random source are unexported
// (MetaAllocator.allocators, Allocator.rand), so they are reached by reflection, under the
// MetaAllocator's own lock.
func deterministicAllocators(meta *ipallocator.MetaAllocator) (int, error) {
	v := reflect.ValueOf(meta).Elem()
	mu := v.FieldByName("mu")
	allocs := v.FieldByName("allocators")
	if !mu.IsValid() || mu.Type() != reflect.TypeOf(sync.Mutex{}) || !allocs.IsValid() || allocs.Kind() != reflect.Map {
		return 0, fmt.Errorf("oracle: MetaAllocator has no mu/allocators fields in this release")
	}
	lock := (*sync.Mutex)(unsafe.Pointer(mu.UnsafeAddr()))
	lock.Lock()
	defer lock.Unlock()
	iter := allocs.MapRange()
	for iter.Next() {
		item := iter.Value()
		if item.Kind() == reflect.Pointer {
			item = item.Elem()
		}
		alloc := item.FieldByName("allocator")
		if !alloc.IsValid() || alloc.Kind() != reflect.Pointer || alloc.IsNil() {
			return 0, fmt.Errorf("oracle: MetaAllocator item has no allocator field in this release")
		}
		r := alloc.Elem().FieldByName("rand")
		if !r.IsValid() || r.Type() != reflect.TypeOf((*rand.Rand)(nil)) || r.IsNil() {
			return 0, fmt.Errorf("oracle: ipallocator.Allocator has no *rand.Rand field in this release")
		}
		*(*rand.Rand)(r.UnsafePointer()) = *rand.New(zeroSource{})
	}
	return allocs.Len(), nil
}
