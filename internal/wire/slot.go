package wire

import "strings"

// Slots is how many hash slots a Redis cluster parts its keys into.
const Slots = 16384

// Slot is the hash slot of a cluster key, as the cluster's spec computes it: CRC16 (XMODEM) of
// the key's hash tag (what lies between its first '{' and the first '}' after it, when that is
// not empty), or of the whole key, modulo 16384.
func Slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^key[i]]
	}
	return crc % Slots
}

// crcTable is CRC16-CCITT (XMODEM: polynomial 0x1021, no reflection) a byte at a time.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()
