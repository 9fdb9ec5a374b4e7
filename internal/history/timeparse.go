package history

import "time"

// parseRFC3339 returns the Unix nanoseconds of an RFC 3339 time as Go's time.Time.MarshalJSON
// writes it ("2006-01-02T15:04:05.999999999Z07:00", what vegeta and k6 write), without
// time.Parse's cost on the common shape; anything else goes to time.Parse. ok is false for a
// time that is not RFC 3339 or that Unix nanoseconds cannot hold (years 1678 to 2261): Go's
// zero time, which vegeta writes for a result it never timed, is one.
func parseRFC3339(b []byte) (ns int64, ok bool) {
	if ns, ok := fastRFC3339(b); ok {
		return ns, true
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil || t.Year() < minYear || t.Year() > maxYear {
		return 0, false
	}
	return t.UnixNano(), true
}

// The years whose every instant int64 Unix nanoseconds hold.
const minYear, maxYear = 1678, 2261

func fastRFC3339(b []byte) (int64, bool) {
	if len(b) < len("2006-01-02T15:04:05Z") || b[4] != '-' || b[7] != '-' || b[10] != 'T' ||
		b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	year, ok1 := digitsAt(b, 0, 4)
	month, ok2 := digitsAt(b, 5, 2)
	day, ok3 := digitsAt(b, 8, 2)
	hour, ok4 := digitsAt(b, 11, 2)
	minute, ok5 := digitsAt(b, 14, 2)
	sec, ok6 := digitsAt(b, 17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 ||
		year < minYear || year > maxYear {
		return 0, false
	}
	i := 19
	var frac int64
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			if i-start < 9 {
				frac = frac*10 + int64(b[i]-'0')
			}
			i++
		}
		n := i - start
		if n == 0 || n > 9 {
			return 0, false // time.Parse rounds more than 9 digits; leave that to it
		}
		for ; n < 9; n++ {
			frac *= 10
		}
	}
	var offset int64
	switch {
	case i == len(b)-1 && b[i] == 'Z':
	case i == len(b)-6 && (b[i] == '+' || b[i] == '-') && b[i+3] == ':':
		oh, okh := digitsAt(b, i+1, 2)
		om, okm := digitsAt(b, i+4, 2)
		if !okh || !okm || oh > 23 || om > 59 {
			return 0, false
		}
		offset = int64(oh*3600 + om*60)
		if b[i] == '-' {
			offset = -offset
		}
	default:
		return 0, false
	}
	secs := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec) - offset
	return secs*1e9 + frac, true
}

func digitsAt(b []byte, at, n int) (int, bool) {
	v := 0
	for _, c := range b[at : at+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
