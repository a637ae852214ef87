package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Collections;
import java.util.Iterator;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructType;

/**
 * A stored procedure of the catalog ({@code CALL ts.system.optimize(table => 'db.t')}): its
 * parameters come from the delegate, and a call runs there, once, when Spark executes it.
 */
class TsFileProcedure implements UnboundProcedure, BoundProcedure {
  private final ObjectNode request;
  private final String name;
  private final JsonNode description;
  private final ProcedureParameter[] parameters;

  TsFileProcedure(ObjectNode request, String name, JsonNode description) {
    this.request = request;
    this.name = name;
    this.description = description;
    JsonNode list = description.get("parameters");
    parameters = new ProcedureParameter[list.size()];
    for (int i = 0; i < parameters.length; i++) {
      JsonNode parameter = list.get(i);
      ProcedureParameter.Builder builder =
          ProcedureParameter.in(
              parameter.get("name").asText(), DataType.fromDDL(parameter.get("type").asText()));
      if (!parameter.path("default").isNull()) {
        builder = builder.defaultValue(parameter.get("default").asText());
      }
      parameters[i] = builder.build();
    }
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String description() {
    return description.path("description").asText();
  }

  @Override
  public BoundProcedure bind(StructType inputType) {
    return this;
  }

  @Override
  public ProcedureParameter[] parameters() {
    return parameters;
  }

  @Override
  public boolean isDeterministic() {
    return false;
  }

  @Override
  public Iterator<Scan> call(InternalRow input) {
    ObjectNode call = request.deepCopy();
    ObjectNode args = call.putObject("args");
    for (int i = 0; i < parameters.length; i++) {
      String key = parameters[i].name();
      DataType type = parameters[i].dataType();
      if (input.isNullAt(i)) {
        args.putNull(key);
      } else if (type instanceof LongType) {
        args.put(key, input.getLong(i));
      } else if (type instanceof DoubleType) {
        args.put(key, input.getDouble(i));
      } else if (type instanceof BooleanType) {
        args.put(key, input.getBoolean(i));
      } else if (type instanceof MapType) {
        // map<string,string>, the one map type a procedure declares (options => map(...)).
        MapData map = input.getMap(i);
        ArrayData keys = map.keyArray();
        ArrayData values = map.valueArray();
        ObjectNode entries = args.putObject(key);
        for (int j = 0; j < map.numElements(); j++) {
          String value = values.isNullAt(j) ? null : values.getUTF8String(j).toString();
          entries.put(keys.getUTF8String(j).toString(), value);
        }
      } else {
        args.put(key, input.getUTF8String(i).toString());
      }
    }
    JsonNode reply = Client.call("call_procedure", call);
    StructType schema = (StructType) DataType.fromJson(reply.get("schema").asText());
    Scan result = Aggregates.localScan(schema, reply.get("rows"), "tsfile " + name);
    return Collections.singletonList(result).iterator();
  }
}
