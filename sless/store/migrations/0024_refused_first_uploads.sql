-- A function whose first upload was refused by validation, stored before a refused
-- upload set the phase (sless/functions/uploading.py, refused_phase): it reads Pending
-- with no code, though nothing will ever build. It gets what refused_phase gives such a
-- function today: Rejected, with the first finding that rejects as the reason.
UPDATE functions AS f
   SET phase = 'Rejected',
       message = 'upload rejected: ' || COALESCE(
           NULLIF(left(COALESCE(
               (SELECT x->>'message'
                  FROM jsonb_array_elements(f.validation->'findings') AS x
                 WHERE x->>'severity' = 'reject' AND COALESCE(x->>'message', '') <> ''
                 LIMIT 1),
               f.validation->'findings'->0->>'message',
               ''), 300), ''),
           'refused by validation'),
       updated_at = now()
 WHERE f.phase = 'Pending'
   AND COALESCE(jsonb_typeof(f.spec->'code'), 'null') = 'null'
   AND f.validation->>'verdict' = 'reject'
   AND jsonb_typeof(f.validation->'findings') = 'array';
