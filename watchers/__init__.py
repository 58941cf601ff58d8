"""List+watch loops per kind. They only append ``observed`` records to the journal; they never decide."""
