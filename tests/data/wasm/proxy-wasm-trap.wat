;; A proxy-wasm 0.2.1 guest that traps (`unreachable`) in the request headers callback of every
;; request with a body, and lets bodiless requests through: the gateway test checks that the
;; trapping request is refused (fail closed) and that the gateway keeps serving.
(module
  (memory (export "memory") 1)
  (func (export "proxy_abi_version_0_2_1"))
  ;; Configuration bytes land at a fixed offset; this guest never reads them.
  (func (export "proxy_on_memory_allocate") (param i32) (result i32) (i32.const 1024))
  (func (export "proxy_on_context_create") (param i32 i32))
  (func (export "proxy_on_vm_start") (param i32 i32) (result i32) (i32.const 1))
  (func (export "proxy_on_configure") (param i32 i32) (result i32) (i32.const 1))
  ;; (context_id, num_headers, end_of_stream) -> Action (0 = Continue)
  (func (export "proxy_on_request_headers") (param i32 i32 i32) (result i32)
    (if (i32.eqz (local.get 2)) (then unreachable))
    (i32.const 0))
  (func (export "proxy_on_done") (param i32) (result i32) (i32.const 1))
  (func (export "proxy_on_delete") (param i32)))
