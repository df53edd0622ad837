//! The NodePort allocator (`portallocator`): a bitmap over `Base..Base+Size` with the static
//! band of KEP-3668.

use crate::allocation::{Bitmap, Picks, PortError, Seeded, port_band_offset};
use crate::net::PortRange;

/// A NodePort range backed by a bitmap.
#[derive(Debug, Clone)]
pub struct PortAllocator {
    range: PortRange,
    bitmap: Bitmap,
    rng: Seeded,
}

impl PortAllocator {
    /// A port allocator; `bands` selects the KEP-3668 offset (off before 1.27 / with the gate off).
    pub fn new(range: PortRange, bands: bool, picks: impl Into<Picks>) -> PortAllocator {
        let offset = if bands { port_band_offset(range.size) } else { 0 };
        PortAllocator {
            range,
            bitmap: Bitmap::new(range.size as usize, offset as usize),
            rng: Seeded::new(picks, &format!("nodeports/{range}")),
        }
    }

    /// The range.
    pub fn range(&self) -> PortRange {
        self.range
    }

    /// Number of ports in the static band.
    pub fn offset(&self) -> u32 {
        self.bitmap.offset() as u32
    }

    /// Free ports.
    pub fn free(&self) -> u32 {
        self.bitmap.free() as u32
    }

    /// Used ports.
    pub fn used(&self) -> u32 {
        self.bitmap.used() as u32
    }

    /// Inclusive bounds of the static band, when the range has bands.
    pub fn static_band(&self) -> Option<(u32, u32)> {
        let offset = self.offset();
        (offset > 0).then(|| (self.range.base, self.range.base + offset - 1))
    }

    /// Inclusive bounds of the dynamic band.
    pub fn dynamic_band(&self) -> Option<(u32, u32)> {
        let offset = self.offset();
        (offset < self.range.size).then(|| (self.range.base + offset, self.range.last()))
    }

    /// Whether a port is in the static band.
    pub fn in_static_band(&self, port: u32) -> bool {
        self.range.contains(port) && port - self.range.base < self.offset()
    }

    /// `Allocate(port)`.
    pub fn allocate(&mut self, port: u32) -> Result<(), PortError> {
        if !self.range.contains(port) {
            return Err(PortError::NotInRange { range: self.range });
        }
        self.bitmap.allocate((port - self.range.base) as usize).map_err(|_| PortError::Allocated)
    }

    /// `AllocateNext()`.
    pub fn allocate_next(&mut self) -> Result<u32, PortError> {
        match self.bitmap.allocate_next(&mut self.rng) {
            Ok(i) => Ok(self.range.base + i as u32),
            Err(_) => Err(PortError::Full),
        }
    }

    /// `Release(port)`: out-of-range ports are ignored.
    pub fn release(&mut self, port: u32) {
        if self.range.contains(port) {
            self.bitmap.release((port - self.range.base) as usize);
        }
    }

    /// `Has(port)`.
    pub fn has(&self, port: u32) -> bool {
        self.range.contains(port) && self.bitmap.has((port - self.range.base) as usize)
    }

    /// `DryRun().Allocate(port)`.
    pub fn dry_allocate(&self, port: u32) -> Result<(), PortError> {
        if self.range.contains(port) {
            Ok(())
        } else {
            Err(PortError::NotInRange { range: self.range })
        }
    }

    /// `Snapshot()`: range text and bitmap bytes.
    pub fn snapshot(&self) -> (String, Vec<u8>) {
        (self.range.to_string(), self.bitmap.snapshot_bytes())
    }

    /// `Restore(range, data)`.
    pub fn restore(&mut self, range: &str, data: &[u8]) -> Result<(), PortError> {
        if PortRange::parse(range) != Some(self.range) {
            return Err(PortError::MismatchedRange);
        }
        self.bitmap.restore_bytes(data);
        Ok(())
    }
}
