"""Writes N Debezium JSON change events of a PostgreSQL table, each with its Connect schema (Kafka
Connect's JSON converter default), one per line: N events over K keys, in order (a create per key,
then updates), with source.lsn and source.sequence as Debezium 3.5's PostgreSQL connector writes them.

    python3 bench/scripts/debezium_json_events.py N K FILE [full]

With "full", an update carries the row before it too, as from a table with REPLICA IDENTITY FULL:
Flink's debezium-json format needs it (it refuses an update without its before image).
"""
import json, sys
n=int(sys.argv[1]); keys=int(sys.argv[2]); out=sys.argv[3]
full=len(sys.argv) > 4 and sys.argv[4] == "full"
def f(t, name, opt=True, sem=None, params=None):
    d={"type":t,"optional":opt,"field":name}
    if sem: d["name"]=sem
    if params: d["parameters"]=params
    return d
row=[f("int64","id",False),f("string","name"),f("string","email"),f("int32","qty"),
     f("bytes","price",True,"org.apache.kafka.connect.data.Decimal",{"scale":"2","connect.decimal.precision":"10"}),
     f("int64","updated_at",True,"io.debezium.time.MicroTimestamp"),f("boolean","active"),f("string","note")]
source=[f("string","version",False),f("string","connector",False),f("string","name",False),f("int64","ts_ms",False),
 f("string","snapshot",True,"io.debezium.data.Enum",{"allowed":"true,last,false,incremental"}),f("string","db",False),
 f("string","sequence"),f("int64","ts_us"),f("int64","ts_ns"),f("string","schema",False),f("string","table",False),
 f("int64","txId"),f("int64","lsn"),f("int64","xmin")]
schema={"type":"struct","fields":[
 {"type":"struct","fields":row,"optional":True,"name":"pg.public.customers.Value","field":"before"},
 {"type":"struct","fields":row,"optional":True,"name":"pg.public.customers.Value","field":"after"},
 {"type":"struct","fields":source,"optional":False,"name":"io.debezium.connector.postgresql.Source","field":"source"},
 f("string","op",False),f("int64","ts_ms"),f("int64","ts_us"),f("int64","ts_ns"),
 {"type":"struct","fields":[f("string","id",False),f("int64","total_order",False),f("int64","data_collection_order",False)],"optional":True,"name":"event.block","version":1,"field":"transaction"}],
 "optional":False,"name":"pg.public.customers.Envelope","version":2}
sj=json.dumps(schema,separators=(",",":"))
with open(out,"w") as o:
    for i in range(n):
        k=i%keys; lsn=1000+i*8
        def row(j):
            return {"id":k,"name":"customer %d"%k,"email":"c%d@example.com"%k,"qty":j%97,"price":"AYag","updated_at":1700000000000000+j,"active":j%2==0,"note":None}
        after=row(i)
        before=row(i-keys) if full and i>=keys else None
        p={"before":before,"after":after,"source":{"version":"3.5.0.Final","connector":"postgresql","name":"pg","ts_ms":1700000000000+i,"snapshot":"false","db":"shop","sequence":"[\"%d\",\"%d\"]"%(lsn-8,lsn),"ts_us":None,"ts_ns":None,"schema":"public","table":"customers","txId":500+i,"lsn":lsn,"xmin":None},"op":"c" if i<keys else "u","ts_ms":1700000000001+i,"ts_us":None,"ts_ns":None,"transaction":None}
        o.write('{"schema":'+sj+',"payload":'+json.dumps(p,separators=(",",":"))+'}\n')
