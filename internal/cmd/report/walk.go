package report

import "reflect"

// redactAll applies f to every string of the model, exported field or not, so no field can be
// forgotten: the model is small (bounded), walking it is cheap.
func redactAll(r *Report, f func(string) string) { walk(reflect.ValueOf(r), f) }

func walk(v reflect.Value, f func(string) string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), f)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				walk(v.Field(i), f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walk(v.Index(i), f)
		}
	case reflect.Map:
		// maps of the model are keyed by the report's own words (Omitted): values only
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			if e.Kind() == reflect.String {
				v.SetMapIndex(k, reflect.ValueOf(f(e.String())))
			}
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(f(v.String()))
		}
	}
}
