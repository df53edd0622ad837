//! Unit tests of `validation`: each quirk of kube-apiserver we reproduce on purpose.
