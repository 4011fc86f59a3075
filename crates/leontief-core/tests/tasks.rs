//! `Tasks` against the dense matrix it stands for, on generated matrices
//! (sparse, half full, full; negative, fractional and huge entries): every
//! read agrees with the dense one, the JSON is the dense matrix's, and
//! every way of building it gives the same rows.

use leontief_core::{SparseTasks, Tasks};
use proptest::prelude::*;

/// A users x servers matrix whose entries are 0 with probability `zeros`.
fn matrix() -> impl Strategy<Value = Vec<Vec<f64>>> {
    (1usize..6, 1usize..9, 0u32..=4).prop_flat_map(|(users, servers, z)| {
        let entry = prop_oneof![
            z => Just(0.0),
            2 => -5.0f64..1e6,
            1 => Just(1e300),
            1 => 0.0f64..1e-12,
        ];
        proptest::collection::vec(proptest::collection::vec(entry, servers), users)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_read_agrees_with_the_dense_matrix(dense in matrix()) {
        let (nu, k) = (dense.len(), dense[0].len());
        let t = Tasks::from(dense.clone());
        prop_assert_eq!((t.users(), t.servers()), (nu, k));
        prop_assert_eq!(&t.to_dense(), &dense);
        for (n, row) in dense.iter().enumerate() {
            let sum = row.iter().fold(0.0, |s, &x| s + x);
            prop_assert_eq!(t.user_total(n).to_bits(), sum.to_bits());
            let nonzero: Vec<(usize, f64)> =
                row.iter().copied().enumerate().filter(|&(_, x)| x != 0.0).collect();
            prop_assert_eq!(&t.row(n).to_vec(), &nonzero);
            prop_assert_eq!(t.row(n).last(), nonzero.last().copied());
            for (i, &x) in row.iter().enumerate() {
                prop_assert_eq!(t[(n, i)], x);
                prop_assert_eq!(t.get(n, i), x);
            }
        }
        prop_assert_eq!(
            serde_json::to_string(&t).unwrap(),
            serde_json::to_string(&dense).unwrap()
        );
        let back: Tasks = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        prop_assert_eq!(&back, &t);
        prop_assert_eq!(SparseTasks::from_tasks(&t).to_dense().unwrap(), dense.clone());
        prop_assert_eq!(SparseTasks::from_tasks(&t).to_tasks().unwrap(), t.clone());
        prop_assert_eq!(Tasks::from_dense(&dense, k), t);
    }

    #[test]
    fn rows_given_in_any_order_with_repeats_add_up(dense in matrix(), split in 1usize..4) {
        let k = dense[0].len();
        // Each entry given as `split` parts, entries in reverse order.
        let rows: Vec<Vec<(usize, f64)>> = dense
            .iter()
            .map(|row| {
                row.iter()
                    .enumerate()
                    .rev()
                    .flat_map(|(i, &x)| std::iter::repeat_n((i, x / split as f64), split))
                    .collect()
            })
            .collect();
        let t = Tasks::from_rows(k, rows);
        for (n, row) in dense.iter().enumerate() {
            for (i, &x) in row.iter().enumerate() {
                let parts = (0..split).fold(0.0, |s, _| s + x / split as f64);
                prop_assert_eq!(t.get(n, i), parts);
            }
        }
    }

    #[test]
    fn set_add_and_map_keep_the_dense_meaning(dense in matrix(), n in 0usize..6, i in 0usize..9, x in -3.0f64..3.0) {
        let (nu, k) = (dense.len(), dense[0].len());
        let (n, i) = (n % nu, i % k);
        let mut t = Tasks::from(dense.clone());
        let mut d = dense.clone();
        t.set(n, i, x);
        d[n][i] = x;
        prop_assert_eq!(&t.to_dense(), &d);
        t.add(n, i, 1.5);
        d[n][i] += 1.5;
        prop_assert_eq!(&t.to_dense(), &d);
        t.map_values(|_, _, v| v * 0.5);
        for row in d.iter_mut() {
            for v in row.iter_mut() {
                *v *= 0.5;
            }
        }
        prop_assert_eq!(&t.to_dense(), &d);
        t.set_row(n, vec![(i, 2.0)]);
        d[n] = vec![0.0; k];
        d[n][i] = 2.0;
        prop_assert_eq!(t.to_dense(), d);
    }
}
